"""The ``sabha`` command line."""
