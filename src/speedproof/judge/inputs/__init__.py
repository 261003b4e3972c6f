"""Inputs a candidate cannot have seen: twins, generated inputs and holdout inputs (docs/adr/0030).

A candidate's code can read the repository, so it can recognise a representative workload's
argv and input and print a stored answer. Each judgement therefore also runs workloads on inputs
made for it alone: `twins` copies a representative workload's declared inputs to fresh random
names, `generated` runs a workload's generator with a secret seed, and `unseen` puts them, with a
fresh copy of the holdout folder, in one scratch folder that only the runs reading them can see.
"""
