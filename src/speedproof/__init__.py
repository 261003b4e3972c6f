"""speedproof: models guess, code proves."""

__version__ = "0.1.0"
