"""Behaviour: both programs on every workload and twin, compared (`check.check_behaviour`) by
normalised digests (`fingerprints`) of their output and declared output files (`outputs`), a
difference said in words (`differences`), and inputs nobody has seen (`variants.variants_gate`).
Nothing is imported here."""
