"""The rate the whole pipeline hears at, in a module of its own: the caregiver's page plays takes at
it without loading numpy."""

PIPELINE_RATE = 16_000
