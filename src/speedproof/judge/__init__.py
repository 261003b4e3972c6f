"""The judge: one patch through the guard, both builds, the tests, behaviour and both lanes.

Laid out as the path (docs/adr/0070): one sub-package a stage, in order `guard`, `worktree`,
`build`, `tests`, `inputs`, `behaviour`, `measure`, `policy`, all standing on `speedproof.ground`;
and the thin orchestration here:

- `patches`: reading a patch and `judge_patch`, what `speedproof judge` calls.
- `evaluate`: `Judge`, one candidate through every stage to its `Outcome` (`outcome`), with
  `isolation` and `early_end`.
- `view`: the verdict as the terminal shows it.
- `command`: the `speedproof judge` command, registered eagerly so a guard reject stays fast.

Nothing is imported here: `speedproof judge --help` and a guard reject must not pay for what a
judgement that gets further needs (docs/adr/0039).
"""
