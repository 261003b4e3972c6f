"""textstat: word frequencies, n-grams and line statistics for text and CSV files."""

__version__ = "0.4.1"
