"""The campaign loop: `speedproof optimize` proposes, judges and keeps proven speedups.

See docs/adr/0023-campaign-loop.md. The loop (`loop.Campaign`) reads its state from the ledger
before every candidate (`state.load_state`), so a campaign killed at any point resumes where it
stopped; exit and escalation conditions are pure functions of that state (`exits`).
"""
