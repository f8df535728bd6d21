"""The caregiver web page (`appliance serve`): pairing, accounts, the day's turns, live."""
