"""Building both sides: `factory.toolchain_for` picks the toolchain for a manifest's language,
above the languages themselves (`go`, `python` with `pycache`, `command` for any other program).
The contract they implement is `speedproof.ground.toolchain`. Nothing is imported here."""
