"""The judge: one patch through the guard, both builds, the tests, behaviour and both lanes.

- `patches`: reading a patch and `judge_patch`, what `speedproof judge` calls.
- `evaluate`: `Judge`, one candidate through every gate to its `Outcome` (`outcome`), with
  `isolation`, `instruction_lane` and `early_end`.
- `view`: the verdict as the terminal shows it.
- `command`: the `speedproof judge` command, registered eagerly so a guard reject stays fast.

Nothing is imported here: `speedproof judge --help` and a guard reject must not pay for what a
judgement that gets further needs (docs/adr/0039).
"""
