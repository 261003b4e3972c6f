"""Measuring both sides: the instruction lane (`instruction_lane`, `instructions`, `cachegrind`,
`escapes`, `opens`, `refusals`) and the timed lane (`schedule`, the source of pairs;
`sequential_rule`, the one loop from pairs to evidence; `runner`, ABBA pairs; `placement`,
`pinning`, `environment`, `resolution`, `reported`, `replay`), read into comparisons by
`readings`. One accounted process run is `speedproof.ground.process`. Nothing is imported here."""
