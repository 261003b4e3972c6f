"""The ledger: an append-only SQLite record of every candidate, gate, command, sample and verdict.

Rows are only ever inserted. A candidate row is written before any work starts and each stage
commits as it finishes, so a crash or Ctrl-C mid-run leaves everything measured so far on disk and
a candidate with no verdict row, which `list` shows as `unfinished`.

- `store`: the file, its schema (`schema`) and the one transaction every write goes through;
- `rows`: the row types and the JSON bodies are stored as;
- `candidates`: the judge's rows; `campaigns`: a campaign's; `reading`: reading them back.
"""

from __future__ import annotations

from speedproof.ledger.campaigns import CampaignRecords
from speedproof.ledger.candidates import CandidateRecords
from speedproof.ledger.reading import LedgerReading
from speedproof.ledger.rows import (
    CandidateWriter,
    HotFunctionRow,
    ProposerOutcome,
    RoleCall,
    SampleRow,
    dumps,
)
from speedproof.ledger.schema import LEDGER_FILE, SCHEMA_VERSION

__all__ = [
    "LEDGER_FILE",
    "SCHEMA_VERSION",
    "CandidateWriter",
    "HotFunctionRow",
    "Ledger",
    "ProposerOutcome",
    "RoleCall",
    "SampleRow",
    "dumps",
]


class Ledger(CandidateRecords, CampaignRecords, LedgerReading):
    """The ledger: one SQLite file, every candidate, campaign and call it records, and reading
    them back."""
