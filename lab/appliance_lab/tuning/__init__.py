"""Tuning runs, one module each (`python -m appliance_lab.tuning.NAME`); their figures are in
docs/measurements/."""
