"""What the tests share: toy targets, a git wrapper, fakes of outside services. It holds no tests.

pytest puts `tests/` on sys.path (`pythonpath` in pyproject.toml), so a test imports these as
`from support.<topic> import ...` from whichever folder it lives in.
"""
