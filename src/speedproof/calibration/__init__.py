"""`speedproof calibrate`: A/A, null and known-win trials through the judge's own schedule."""
