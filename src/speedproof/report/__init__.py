"""Campaign reports: the ledger of a campaign folder as HTML, Markdown and JSON.

`data` reads the ledger into one `ReportData` model (the JSON version); `html` and `markdown`
render that model through the `*.j2` templates beside this file; `plots` draws each candidate's
samples with plotly; `advice` reads the advisor's flags and hazards and the explorer's
proposals; `discovery` reads the hot functions of each parent and why nothing was proposed for
each. `write_report` is the one entry point the CLI calls.
"""

from speedproof.report.data import load_report
from speedproof.report.model import ReportData
from speedproof.report.write import ReportPaths, write_report

__all__ = ["ReportData", "ReportPaths", "load_report", "write_report"]
