"""A campaign whose proposer finds nothing still says what it looked at: the hot functions
discovery found at each parent, with their shares, and why each rule and role proposed nothing
for each, in the ledger, the report (HTML, Markdown, JSON) and the summary `optimize` prints.

The target is a real Python project in a real git repository, profiled for real: `primes`
counts primes by trial division, a loop no heuristic rule rewrites (`is_prime` has no
constant membership test, no regex, no sort, no helper to inline).
"""

from __future__ import annotations

import sqlite3
import textwrap
from pathlib import Path

from speedproof.agents.heuristic import rules
from speedproof.ledger import SCHEMA_VERSION, Ledger
from speedproof.report import load_report, write_report
from support.campaign import committed_repo, optimize, rows
from support.toy_target import PYTEST_SUITE, toy_manifest, workload_table

CORE = textwrap.dedent(
    '''\
    """Counting primes by trial division."""


    def is_prime(n):
        if n < 2:
            return False
        d = 2
        while d * d <= n:
            if n % d == 0:
                return False
            d += 1
        return True


    def count(limit):
        total = 0
        for n in range(limit):
            if n % 2 or n == 2:
                total += is_prime(n) and 1 or 0
        return total


    def main(argv):
        with open(argv[0], encoding="utf-8") as handle:
            limit = int(handle.read())
        print(count(limit))
        return 0
    '''
)

MANIFEST = toy_manifest(
    workload_table(
        "limit", "data/limit.txt", tier="representative", files=["data/limit.txt"], timeout_s=30
    ),
    name="primes",
    language="python",
    entry='module = "primes"',
    tests=PYTEST_SUITE,
    instructions=False,
)

FILES = {
    "speedproof.toml": MANIFEST,
    "primes/__init__.py": "",
    "primes/__main__.py": (
        "import sys\n\nfrom primes.core import main\n\nsys.exit(main(sys.argv[1:]))\n"
    ),
    "primes/core.py": CORE,
    "tests/test_core.py": (
        "from primes.core import count, is_prime\n\n\n"
        "def test_small_primes():\n"
        "    assert [n for n in range(12) if is_prime(n)] == [2, 3, 5, 7, 11]\n"
        "    assert count(12) == 5\n"
    ),
    "data/limit.txt": "30000\n",
}


def test_a_campaign_that_proposes_nothing_reports_its_hot_functions_and_every_rules_reason(
    tmp_path: Path,
) -> None:
    repo = committed_repo(tmp_path / "primes", FILES, "primes")
    folder = tmp_path / "campaign"
    done = optimize(
        "--manifest", str(repo / "speedproof.toml"), "--no-stability-check", "--out", str(folder)
    )
    assert done.returncode == 0, done.stdout + done.stderr

    # The summary on stdout: the hot functions with their shares, and why nothing came of them.
    summary = done.stdout
    assert "hot functions at " in summary and "(cProfile, limit):" in summary
    assert "1. primes.core.is_prime (primes/core.py:4-12) " in summary
    assert "% self, " in summary and "nothing proposed" in summary
    assert "pattern not found by: py-frozenset-constant, py-hoist-regex" in summary
    assert "rule py-inline-helper: is_prime is not one return statement" in summary
    assert "coordinator: no rule applies to any hot function" in summary
    # No empty table of candidates: one line that says so, and why.
    assert "no candidate was judged: the coordinator has nothing left: " in summary
    assert "candidates" not in summary.split("no candidate was judged")[0], summary

    # The ledger: one discovery, its hot functions, each rule's outcome on each of them.
    (discovery,) = rows(folder, "SELECT * FROM discoveries")
    hot = rows(folder, "SELECT * FROM hot_functions ORDER BY rank")
    assert discovery["profiler"] == "cProfile" and len(hot) >= 2
    assert hot[0]["name"] == "primes.core.is_prime" and hot[0]["self_pct"] > 50
    said = rows(folder, "SELECT function, role, rule FROM proposer_outcomes WHERE rule IS NOT NULL")
    for function in (h["name"] for h in hot):
        assert [r["rule"] for r in said if r["function"] == function] == list(
            rules.rule_ids("python")
        )

    # The report: a Discovery section in all three versions.
    (campaign,) = load_report(folder).campaigns
    assert campaign.candidates == [] and campaign.exit is not None
    (found,) = campaign.discovery
    first = found.functions[0]
    assert (first.name, first.file, first.start_line) == (
        "primes.core.is_prime",
        "primes/core.py",
        4,
    )
    assert first.self_pct > 50 and first.cum_pct >= first.self_pct and not first.proposing
    assert [o.role for o in found.outcomes] == ["coordinator"]
    count = next(f for f in found.functions if f.name == "primes.core.count")
    assert any(o.role == "optimizer" and o.rule is None for o in count.outcomes)
    paths = write_report(folder)
    markdown = paths.markdown.read_text()
    assert "No candidate was judged. Discovery found" in markdown
    assert "### Discovery" in markdown and "| 1 | `primes.core.is_prime` |" in markdown
    assert "Why `primes.core.is_prime` (" in markdown
    assert "- rule `py-inline-helper`: is\\_prime is not one return statement" in markdown
    assert "- rule `py-hoist-regex`: not found: a regular expression" in markdown
    html = paths.html.read_text()
    assert 'id="discovery-1"' in html and "<code>primes.core.is_prime</code>" in html
    assert "is_prime is not one return statement" in html


def test_an_older_ledger_gains_the_discovery_tables_and_its_report_still_reads(
    tmp_path: Path,
) -> None:
    path = tmp_path / "ledger.sqlite"
    with Ledger(path) as ledger:
        ledger.start_campaign("c1", target="t", repo=tmp_path, base_rev="0" * 40, options={})
        ledger.add_event("c1", "exit", {"condition": "nothing-left", "message": "done"})
    # What a ledger written before discovery was recorded looks like.
    old = sqlite3.connect(path)
    old.executescript(
        "DROP TABLE proposer_outcomes; DROP TABLE hot_functions; DROP TABLE discoveries;"
        "UPDATE meta SET value = '2' WHERE key = 'schema';"
    )
    old.close()
    with Ledger(path) as ledger:
        assert ledger.discoveries("c1") == []
        schema = ledger.query("SELECT value FROM meta WHERE key = 'schema'")
        assert schema == [{"value": str(SCHEMA_VERSION)}] and SCHEMA_VERSION == 3
    (campaign,) = load_report(tmp_path).campaigns
    assert campaign.discovery == [] and campaign.exit is not None
    markdown = write_report(tmp_path).markdown.read_text()
    assert "No candidate was judged.\n" in markdown and "### Discovery" not in markdown
