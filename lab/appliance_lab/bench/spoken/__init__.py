"""The spoken corpus: command sentences said by many offline voices, under noise and reverb,
each with the action the grammar plans from its written text (`appliance bench voice`)."""
