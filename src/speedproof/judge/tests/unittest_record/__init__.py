"""A folder holding only speedproof's unittest runner, so that it alone can be shown to a test run.

The test runner mounts this folder read-only and imports `speedproof_unittest` from it as a
top-level module; nothing else of speedproof is visible to the target's tests.
"""
