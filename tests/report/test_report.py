"""Campaign reports: a real ledger in, report.html, report.md and report.json out.

The ledger is written through the `Ledger` API the judge uses (candidates, gates, samples,
comparisons from the real statistics, verdicts) and the campaign tables are filled the way the
campaign loop fills them, with plain inserts in the ledger's own transactions.
"""

from __future__ import annotations

import json
import math
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from speedproof.advisor import AdvisorFlags, CauseFlag, FunctionFlags, Gates, Hazard, HazardReview
from speedproof.advisor.records import record_causes, record_hazards
from speedproof.discovery import HotFunction
from speedproof.examples import get_example, materialise
from speedproof.ground.errors import InfrastructureError
from speedproof.ground.sandbox import make_sandbox
from speedproof.judge.evaluate import Judge, JudgeOptions
from speedproof.judge.patches import read_patch
from speedproof.ledger import LEDGER_FILE, Ledger, SampleRow
from speedproof.manifest_loading import load_manifest
from speedproof.report import ReportData, load_report, write_report
from speedproof.report.markdown import cell, fence
from support.campaign_ledger import (
    CAMPAIGN,
    MEASURED_ON,
    OFFSETS,
    SCRIPT_DIFF,
    SPEEDUP_DIFF,
    Built,
    add_candidate,
    add_event,
    build_campaign_ledger,
    insert_row,
)

MEASURED_ON += "timed on CPU 1"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    return build_campaign_ledger(tmp_path_factory.mktemp("campaign"))


@pytest.fixture(scope="module")
def report(built: Built) -> ReportData:
    return load_report(built.folder)


@pytest.fixture(scope="module")
def written(built: Built, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    paths = write_report(built.folder, out=tmp_path_factory.mktemp("out"))
    return {
        "html": paths.html.read_text(encoding="utf-8"),
        "md": paths.markdown.read_text(encoding="utf-8"),
        "json": paths.json.read_text(encoding="utf-8"),
    }


class _Tags(HTMLParser):
    """Every start tag with its attributes, and the text outside scripts and styles."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._skip += tag in ("script", "style")

    def handle_endtag(self, tag: str) -> None:
        self._skip -= tag in ("script", "style")

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.text.append(data)


def _parse(html: str) -> _Tags:
    tags = _Tags()
    tags.feed(html)
    return tags


# ----- the files --------------------------------------------------------------------------------


def test_the_report_is_written_beside_the_ledger_when_no_out_folder_is_given(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "campaign"
    build_campaign_ledger(folder)
    paths = write_report(folder)
    assert {p.name for p in (paths.html, paths.markdown, paths.json)} == {
        "report.html",
        "report.md",
        "report.json",
    }
    written = (paths.html, paths.markdown, paths.json)
    assert all(p.parent == folder and p.stat().st_size > 0 for p in written)
    assert paths.plots_left_out is None  # plotly is installed: the page has its plots


def test_a_folder_without_a_ledger_is_a_named_error_and_gets_no_ledger(tmp_path: Path) -> None:
    with pytest.raises(InfrastructureError, match="no ledger at"):
        write_report(tmp_path)
    assert not (tmp_path / LEDGER_FILE).exists()
    with pytest.raises(InfrastructureError, match="no campaign folder"):
        write_report(tmp_path / "missing")


def test_the_json_version_round_trips_through_the_model(written: dict[str, str]) -> None:
    data = ReportData.model_validate_json(written["json"])
    assert data.model_dump_json(indent=2) + "\n" == written["json"]
    assert [c.id for c in data.campaigns] == [CAMPAIGN, None]


# ----- what the data says ------------------------------------------------------------------------


def test_the_timeline_keeps_candidate_order_statuses_and_parents(
    report: ReportData, built: Built
) -> None:
    campaign = report.campaigns[0]
    first, second = built.accepted
    by_id = {c.id: c for c in campaign.candidates}
    assert list(by_id) == sorted(by_id)
    assert by_id[first].parent is None
    assert by_id[built.guarded].parent == first
    assert by_id[second].parent == first
    assert by_id[built.inconclusive].parent == second
    statuses = {c.id: c.status for c in campaign.candidates}
    assert statuses == {
        first: "accepted",
        built.guarded: "rejected",
        second: "accepted",
        built.inconclusive: "inconclusive",
        built.crashed: "error",
        built.unfinished: "unfinished",
    }


def test_the_hypothesis_and_rule_come_from_the_optimizers_answer(
    report: ReportData, built: Built
) -> None:
    by_id = {c.id: c for c in report.campaigns[0].candidates}
    proposal = by_id[built.accepted[0]].proposal
    assert proposal.hypothesis == "sorting every word is slow; a heap keeps the top n"
    assert proposal.rule == "heap-top-n"
    assert proposal.function == "textstat.report.top_words"
    assert by_id[built.accepted[1]].proposal.rule is None
    assert by_id[built.guarded].proposal.hypothesis is None


def test_the_exit_condition_is_read_from_the_last_exit_event(report: ReportData) -> None:
    exit_ = report.campaigns[0].exit
    assert exit_ is not None
    assert (exit_.condition, exit_.message) == ("budget-exhausted", "spent $2.00 of $2.00")


def test_a_campaign_resumed_after_its_exit_has_no_exit_yet(tmp_path: Path) -> None:
    build_campaign_ledger(tmp_path)
    with Ledger.in_folder(tmp_path) as ledger:
        add_event(ledger, "resume", {"reason": "budget raised"})
    assert load_report(tmp_path).campaigns[0].exit is None


def test_the_chain_multiplies_its_links_mean_ratios(report: ReportData, built: Built) -> None:
    chain = report.campaigns[0].chain
    assert [s.candidate_id for s in chain.steps] == list(built.accepted)
    assert [s.workload for s in chain.steps] == ["novel", "novel"]
    assert chain.steps[0].improvement_pct == pytest.approx(20.0)
    assert chain.steps[1].improvement_pct == pytest.approx(25.0)
    cumulative = {c.workload: c for c in chain.cumulative}
    # 0.100 s → 0.080 s → 0.060 s: 40 % in all, not 20 + 25.
    assert cumulative["novel"].improvement_pct == pytest.approx(40.0)
    assert (cumulative["novel"].steps, cumulative["novel"].of_steps) == (2, 2)
    assert cumulative["reviews-by-rating"].improvement_pct == pytest.approx(5.0)
    assert cumulative["reviews-by-rating"].steps == 1


def test_costs_are_summed_per_role_and_in_total(report: ReportData) -> None:
    costs = {r.role: r for r in report.campaigns[0].costs}
    assert list(costs) == ["coordinator", "optimizer", "reviewer", "total"]
    assert costs["optimizer"].calls == 3
    assert costs["optimizer"].failed == 1
    assert costs["optimizer"].input_tokens == 6100
    assert costs["optimizer"].cost_usd == pytest.approx(0.091)
    assert costs["reviewer"].unpriced == 1
    total = costs["total"]
    assert (total.calls, total.input_tokens, total.output_tokens) == (5, 9100, 860)
    assert total.cost_usd == pytest.approx(0.101)
    assert total.unpriced == 1


def test_the_instruction_reading_sits_beside_the_timed_ones(report: ReportData) -> None:
    first = report.campaigns[0].candidates[0]
    novel = [(r.lane, r.metric) for r in first.readings if r.workload == "novel"]
    assert novel == [("timed", "wall"), ("timed", "cpu"), ("instructions", "instructions")]
    counted = next(r for r in first.readings if r.lane == "instructions")
    assert counted.exact
    assert counted.delta_pct == pytest.approx(-20.0)


def test_every_sample_lands_in_its_distribution_in_the_shown_unit(report: ReportData) -> None:
    first = report.campaigns[0].candidates[0]
    cells = {(d.workload, d.metric): d for d in first.distributions}
    wall = cells[("novel", "wall")]
    assert wall.unit == "ms"
    assert sorted(wall.baseline) == pytest.approx(sorted(100.0 * (1 + o) for o in OFFSETS))
    assert len(wall.candidate) == len(OFFSETS)
    assert cells[("novel", "memory")].unit == "MiB"
    assert cells[("novel", "memory")].baseline[0] == pytest.approx(20.0)


def test_a_change_against_a_zero_baseline_reads_as_none_with_its_reason(
    report: ReportData, built: Built
) -> None:
    by_id = {c.id: c for c in report.campaigns[0].candidates}
    (zero,) = by_id[built.inconclusive].readings
    assert zero.delta_pct is None
    assert zero.note
    with Ledger.in_folder(built.folder) as ledger:
        body = ledger.query("SELECT body FROM comparisons")[-1]["body"]
    assert math.isnan(json.loads(body)["delta_pct"])


def test_concerns_and_role_calls_belong_to_their_candidate(
    report: ReportData, built: Built
) -> None:
    by_id = {c.id: c for c in report.campaigns[0].candidates}
    (concern,) = by_id[built.accepted[0]].concerns
    assert (concern.source, concern.severity) == ("reviewer", "medium")
    assert [c.role for c in by_id[built.accepted[0]].role_calls] == ["optimizer", "reviewer"]
    assert by_id[built.accepted[1]].concerns == []


def test_candidates_outside_a_campaign_form_their_own_group_with_no_chain(
    report: ReportData, built: Built
) -> None:
    loose = report.campaigns[1]
    assert loose.id is None
    assert [c.id for c in loose.candidates] == [built.loose]
    assert loose.candidates[0].parent is None
    assert loose.chain.steps == []
    assert loose.exit is None


def test_an_empty_ledger_and_a_campaign_without_candidates_render(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    Ledger.in_folder(empty).close()
    paths = write_report(empty)
    assert load_report(empty).campaigns == []
    assert "no campaign and no candidate" in paths.html.read_text()
    assert "no campaign and no candidate" in paths.markdown.read_text()

    started = tmp_path / "started"
    with Ledger.in_folder(started) as ledger:
        insert_row(
            ledger,
            "campaigns",
            id=CAMPAIGN,
            created_at="2024-05-01T11:59:00",
            target="textstat",
            repo="/r",
            base_rev="a" * 40,
            options="{}",
        )
        add_event(ledger, "start", {})
    paths = write_report(started)
    html = paths.html.read_text()
    assert "No candidate was judged" in html
    assert "No exit recorded" in html
    assert "Plotly.newPlot" not in html
    assert "No candidate was judged" in paths.markdown.read_text()


def test_a_verdict_the_policy_cannot_give_is_a_named_error(tmp_path: Path) -> None:
    with Ledger.in_folder(tmp_path) as ledger:
        cid = add_candidate(ledger, SPEEDUP_DIFF, "a" * 40)
        ledger.finish(cid, verdict="maybe", reasons=[], rests_on=None, lane=None, timings={})
    with pytest.raises(InfrastructureError, match="verdict 'maybe'"):
        load_report(tmp_path)


def test_an_exit_event_without_a_condition_is_a_named_error(tmp_path: Path) -> None:
    with Ledger.in_folder(tmp_path) as ledger:
        add_event(ledger, "exit", {"message": "stopped"})
    with pytest.raises(InfrastructureError, match="names no condition"):
        load_report(tmp_path)


# ----- the HTML page --------------------------------------------------------------------------


def test_a_diff_with_a_script_tag_shows_as_text(written: dict[str, str]) -> None:
    html = written["html"]
    tags = _parse(html)
    scripts = [attrs for tag, attrs in tags.tags if tag == "script"]
    # plotly.js once, then one drawing script per measured candidate; none from the diff.
    assert "&lt;script&gt;alert(&#39;owned&#39;)&lt;/script&gt;" in html
    assert "<script>alert(" not in html
    assert "</pre><script>" not in html
    assert any("<script>alert('owned')</script>" in t for t in tags.text)
    assert len(scripts) == 1 + 2


def test_the_page_loads_nothing_from_the_network(written: dict[str, str]) -> None:
    tags = _parse(written["html"])
    loads = [
        (tag, name, value)
        for tag, attrs in tags.tags
        for name, value in attrs.items()
        if name in ("src", "href", "srcset", "data", "action", "poster")
        and value
        and re.match(r"\s*(https?:)?//", value)
    ]
    assert loads == []
    assert not [t for t, a in tags.tags if t == "link"]
    styles = re.findall(r"<style>(.*?)</style>", written["html"], re.DOTALL)
    assert styles and not any("@import" in s or "url(" in s for s in styles)


def test_plotly_js_is_written_beside_the_page_which_loads_it_once(
    built: Built, tmp_path: Path
) -> None:
    paths = write_report(built.folder, out=tmp_path)
    html = paths.html.read_text(encoding="utf-8")
    # plotly.js (4.6 MB) inlined made the page 4.9 MB; beside it, the page is what it shows.
    assert len(html.encode()) < 1_000_000
    assert html.count('<script src="plotly.min.js"></script>') == 1
    assert "plotly.js v" not in html and html.count("Plotly.newPlot(") == 2
    # A string only the plotly.js bundle holds.
    assert paths.beside == (tmp_path / "plotly.min.js",)
    assert "plotly.js v" in paths.beside[0].read_text(encoding="utf-8")


def test_a_single_file_page_inlines_plotly_js_exactly_once(built: Built, tmp_path: Path) -> None:
    paths = write_report(built.folder, out=tmp_path, single_file=True)
    html = paths.html.read_text(encoding="utf-8")
    assert html.count("plotly.js v") == 1 and html.count("Plotly.newPlot(") == 2
    assert "<script src=" not in html and not (tmp_path / "plotly.min.js").exists()


def test_a_page_without_plots_writes_no_plotly_js_beside_it(tmp_path: Path) -> None:
    folder = tmp_path / "campaign"
    Ledger(folder / LEDGER_FILE).close()
    paths = write_report(folder)
    assert "<script src=" not in paths.html.read_text(encoding="utf-8")
    assert not (folder / "plotly.min.js").exists()


def test_the_page_names_the_exit_condition_in_its_banner(written: dict[str, str]) -> None:
    banner = re.search(r'<div class="exit" id="exit-1">(.*?)</div>', written["html"], re.DOTALL)
    assert banner is not None
    assert '<span class="condition">budget-exhausted</span>' in banner.group(1)
    assert "spent $2.00 of $2.00" in banner.group(1)


def test_the_page_escapes_reviewer_text_and_shows_every_section(
    written: dict[str, str], built: Built
) -> None:
    html = written["html"]
    assert "may | now order &lt;differently&gt;" in html
    for heading in ("Timeline", "Accepted chain", "Model calls: tokens and cost", "Candidates"):
        assert f"<h3>{heading}</h3>" in html
    for cid in (*built.accepted, built.guarded, built.crashed, built.unfinished, built.loose):
        assert f'id="candidate-{cid}"' in html
    assert "No samples: the candidate ended before measurement, at the guard gate." in html
    assert "InfrastructureError: go build vanished" in html
    assert "instructions: -20.00% (exact, n=2)" in html
    assert "+40.00%" in html


# ----- the Markdown version -----------------------------------------------------------------


def test_markdown_fences_every_diff_and_escapes_the_script_in_prose(
    written: dict[str, str],
) -> None:
    md = written["md"]
    assert "```diff\n" + SCRIPT_DIFF in md
    # The speedup diff holds a run of two backticks, so its fence is three.
    assert md.count("```diff\n") == 7
    assert "may \\| now order \\<differently\\>" in md
    assert "**Stopped: `budget-exhausted`** — spent $2.00 of $2.00" in md


def test_markdown_tables_keep_one_row_a_candidate(written: dict[str, str], built: Built) -> None:
    md = written["md"]
    timeline = md.split("### Timeline", 1)[1].split("###", 1)[0]
    rows = [line for line in timeline.splitlines() if line.startswith("| ") and "---" not in line]
    assert len(rows) == 1 + 6
    assert all(row.count(" | ") == 6 for row in rows[1:])


def test_markdown_cells_and_fences_escape_what_would_start_markup() -> None:
    assert cell("a | b <i>\nc") == "a \\| b \\<i\\> c"
    assert fence("no ticks") == "```"
    assert fence("a ```` run") == "`````"


# ----- a ledger the real judge wrote ------------------------------------------------------------


@pytest.mark.slow
def test_a_ledger_written_by_the_real_judge_reports_every_lane(tmp_path: Path) -> None:
    """textstat's stop-word speedup and an attack, judged for real (bwrap, pytest, Cachegrind);
    about 3 minutes on a loaded 2-core machine, most of it Cachegrind on Python."""
    example = get_example("textstat")
    root = materialise(example, tmp_path)
    folder = tmp_path / "campaign"
    ids = []
    with Ledger.in_folder(folder) as ledger:
        insert_row(
            ledger,
            "campaigns",
            id=CAMPAIGN,
            created_at="2024-05-01T11:59:00",
            target="textstat",
            repo=str(root),
            base_rev="HEAD",
            options="{}",
        )
        add_event(ledger, "start", {})
        for name in ("speedup-stopword-set", "attack-edit-test"):
            judge = Judge(
                load_manifest(root),
                sandbox=make_sandbox(),
                ledger=ledger,
                options=JudgeOptions(pairs=6, campaign=CAMPAIGN, origin="campaign"),
            )
            ids.append(judge.judge(read_patch(example.folder / "patches" / f"{name}.patch")))
        add_event(ledger, "exit", {"condition": "no-candidates-left", "message": "two patches"})
    paths = write_report(folder)
    data = ReportData.model_validate_json(paths.json.read_text())
    speedup, attack = data.campaigns[0].candidates
    assert speedup.status == ids[0].verdict.verdict
    lanes = {(r.workload, r.lane, r.metric) for r in speedup.readings}
    assert {("novel", "timed", "wall"), ("novel", "instructions", "instructions")} <= lanes
    cells = {(d.workload, d.metric): d for d in speedup.distributions}
    assert len(cells[("novel", "wall")].baseline) >= 6
    assert attack.status == "rejected" and attack.distributions == []
    html = paths.html.read_text()
    assert html.count("Plotly.newPlot(") == 1
    assert "no-candidates-left" in html


def test_a_round_measured_again_is_kept_apart_from_the_judged_samples(tmp_path: Path) -> None:
    with Ledger.in_folder(tmp_path) as ledger:
        cid = add_candidate(ledger, SPEEDUP_DIFF, "a" * 40)
        rows = []
        # Series 0 was contended and measured again as series 1 (same workload, same look);
        # series 2 is the next look.
        for series, look, wall in ((0, 1, 0.5), (1, 1, 0.1), (2, 2, 0.1)):
            ledger.add_gate(
                cid,
                "measure:novel",
                True,
                1.0,
                {"workload": "novel", "series": series, "look": look, "reasons": []},
            )
            rows += [
                SampleRow(series, "novel", side, i, 0, wall, wall, 1024, 0, "f" * 64)
                for side in ("baseline", "candidate")
                for i in range(3)
            ]
        ledger.add_samples(cid, rows)
        ledger.finish(
            cid, verdict="inconclusive", reasons=["x"], rests_on=None, lane=None, timings={}
        )
    (candidate,) = load_report(tmp_path).campaigns[0].candidates
    walls = next(d for d in candidate.distributions if d.metric == "wall")
    assert walls.baseline == pytest.approx([100.0] * 6)
    assert walls.left_out_baseline == pytest.approx([500.0] * 3)
    assert walls.left_out_candidate == pytest.approx([500.0] * 3)
    assert walls.series == 3
    assert "baseline\\u003cbr\\u003e(left out)" in write_report(tmp_path).html.read_text()


# ----- the advisor and the explorer ---------------------------------------------------------


def _hot(name: str, self_pct: float) -> HotFunction:
    return HotFunction(name, "textstat/report.py", 1, 3, self_pct, self_pct, 10, "def f():\n")


def _advise(ledger: Ledger, candidate: int) -> None:
    """What a campaign with `--analyst advisor --reviewer advisor --explorer` writes."""
    top, render = "textstat.report.top_words", "textstat.report.render"
    flags = AdvisorFlags(
        model="static-v1",
        baseline="b" * 64,
        gates=Gates().to_record(),
        functions=(
            FunctionFlags(
                top,
                40.0,
                (
                    CauseFlag(top, "superlinear", 0.93, 2.41, "flagged", None, ("sorts all",)),
                    CauseFlag(
                        top, "unbuffered_io", 0.88, 1.7, "flagged", "reads and writes no file"
                    ),
                    CauseFlag(top, "allocation", 0.2, -0.3, "below-both"),
                ),
            ),
            FunctionFlags(
                render, 50.0, (CauseFlag(render, "allocation", 0.1, -0.5, "below-both"),)
            ),
        ),
    )
    record_causes(ledger, CAMPAIGN, flags, [_hot(render, 50.0), _hot(top, 40.0)], parent="a" * 40)
    review = HazardReview(
        "static-v1",
        top,
        (
            Hazard("changed_ordering", 0.95, 3.2, "flagged", ("ties may reorder",)),
            Hazard("ignored_error", 0.05, -0.3, "below-both"),
        ),
    )
    record_hazards(ledger, CAMPAIGN, candidate, review)
    proposals = {
        "what": "proposals",
        "parent": "a" * 40,
        "rejection": None,
        "proposals": [
            {
                "id": "bigrams",
                "args": ["--ngram", "2"],
                "rationale": "the n-gram path",
                "accepted": True,
                "reason": None,
            },
            {
                "id": "peek",
                "args": ["data/secret.txt"],
                "rationale": "more input",
                "accepted": False,
                "reason": "data/secret.txt is a holdout workload's input",
            },
        ],
        "accepted": [{"id": "bigrams", "args": ["--ngram", "2"], "files": [], "timeout_s": 30}],
    }
    add_event(ledger, "explorer", proposals)
    profiled = {
        "what": "profiled",
        "parent": "a" * 40,
        "workloads": ["novel", "bigrams"],
        "extra": ["bigrams"],
        "dropped": [],
    }
    add_event(ledger, "explorer", profiled)


def test_the_advisor_section_shows_flags_vetoes_and_hazards_and_the_explorers_proposals(
    tmp_path: Path,
) -> None:
    built = build_campaign_ledger(tmp_path)
    first = built.accepted[0]
    with Ledger.in_folder(tmp_path) as ledger:
        _advise(ledger, first)
    data = load_report(tmp_path)
    campaign = data.campaigns[0]
    (parent,) = campaign.advisor
    assert (parent.parent, parent.parent_candidate, parent.model) == ("a" * 40, None, "static-v1")
    # In the order of the score: top_words 40 x (0.25 + 0.75 x 0.93) beats render 50 x 0.25.
    top, render = parent.functions
    assert (top.function, top.rank, render.rank) == ("textstat.report.top_words", 1, 2)
    assert top.score == pytest.approx(37.9)
    assert [(c.cause, c.probability, c.z) for c in top.flagged] == [("superlinear", 0.93, 2.41)]
    assert [(c.cause, c.veto) for c in top.vetoed] == [
        ("unbuffered_io", "reads and writes no file")
    ]
    by_id = {c.id: c for c in campaign.candidates}
    review = by_id[first].advisor
    assert review is not None and (review.asked, review.model) == (2, "static-v1")
    assert [(h.hazard, h.probability, h.z) for h in review.flagged] == [
        ("changed_ordering", 0.95, 3.2)
    ]
    assert by_id[built.guarded].advisor is None
    assert [c.source for c in by_id[first].concerns] == ["reviewer", "advisor"]
    exploration = campaign.explorer
    assert exploration is not None
    assert [(p.id, p.accepted) for p in exploration.proposals] == [
        ("bigrams", True),
        ("peek", False),
    ]
    assert exploration.profiles[0].extra == ["bigrams"]

    paths = write_report(tmp_path)
    md = paths.markdown.read_text()
    advisor = md.split("### Advisor", 1)[1].split("\n### ", 1)[0]
    assert "#### Parent `aaaaaaaaaaaa` (base), advisor `static-v1`" in md
    assert (
        "| 1 | `textstat.report.top_words` | 40.0% | 37.90 | "
        "superlinear (p 0.93, z +2.4): sorts all |" in advisor
    )
    assert "unbuffered_io (p 0.88, z +1.7) vetoed: reads and writes no file" in advisor
    assert (
        "Advisor hazards (`static-v1`, 2 questions about the diff): "
        "changed_ordering (p 0.95, z +3.2)" in md
    )
    assert "- **high** (advisor): advisor: the order of output may change: P(yes) 0.95" in md
    explorer = md.split("### Explorer", 1)[1].split("\n### ", 1)[0]
    assert (
        '| `peek` | `["data/secret.txt"]` | **refused** | '
        "data/secret.txt is a holdout workload's input |" in explorer
    )
    assert "profiled at `aaaaaaaaaaaa`: novel, bigrams (explorer: bigrams)" in explorer
    html = paths.html.read_text()
    for heading in ("Explorer", "Advisor"):
        assert f"<h3>{heading}</h3>" in html
    assert "<h4>Advisor hazards</h4>" in html and "vetoed, reads and writes no file" in html
    assert ReportData.model_validate_json(paths.json.read_text()).campaigns[0].advisor == [parent]


def test_an_advisor_event_that_is_not_what_its_writer_records_is_a_named_error(
    tmp_path: Path,
) -> None:
    with Ledger.in_folder(tmp_path) as ledger:
        add_event(ledger, "advisor", {"what": "causes", "parent": "a" * 40, "model": "static-v1"})
    with pytest.raises(InfrastructureError, match=r"advisor event .* KeyError: 'functions'"):
        load_report(tmp_path)


def test_each_candidate_names_the_machine_and_cpus_it_was_measured_on(
    report: ReportData, written: dict[str, str]
) -> None:
    candidate = report.campaigns[0].candidates[0]
    assert candidate.measured_on() == MEASURED_ON
    assert f"- measured on: {MEASURED_ON}" in written["md"]
    assert MEASURED_ON in "".join(_parse(written["html"]).text)
    assert candidate.model_copy(update={"facts": {"lane": "timed"}}).measured_on() is None


def test_a_dispatched_proposal_shows_in_the_event_log_by_what_it_is_not_its_records(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "campaign"
    build_campaign_ledger(folder)
    diff = "".join(f"+line {i} of a long diff\n" for i in range(40))
    records = {
        "calls": [{"role": "optimizer", "prompt": "the whole prompt the optimizer was shown"}],
        "event": {"function": "count_words", "rule": "py-set-membership"},
        "concerns": [],
        "advisor": None,
    }
    with Ledger.in_folder(folder) as ledger:
        add_event(ledger, "dispatched", {"parent": "b" * 40, "diff": diff, "records": records})
    paths = write_report(folder)
    # Markdown escapes the underscores of words it writes as text.
    for page in (paths.html.read_text(), paths.markdown.read_text().replace("\\_", "_")):
        assert "count_words" in page and "diff_lines" in page
        assert "of a long diff" not in page and "the whole prompt" not in page
    body = next(
        e["body"]
        for c in json.loads(paths.json.read_text())["campaigns"]
        for e in c["events"]
        if e["kind"] == "dispatched"
    )
    assert body["diff"] == diff and body["records"] == records


def test_a_campaigns_options_and_events_read_as_words_not_json(tmp_path: Path) -> None:
    folder = tmp_path / "campaign"
    build_campaign_ledger(folder)
    with Ledger.in_folder(folder) as ledger:
        add_event(ledger, "note", {"what": "abandoned", "candidate": 7, "retried": False})
    paths = write_report(folder)
    html = "".join(_parse(paths.html.read_text()).text)
    markdown = paths.markdown.read_text().replace("\\_", "_")
    for page in (html, markdown):
        assert "budget_usd 2; max_candidates 8" in page
        assert "candidate 7; retried no; what abandoned" in page
        assert '{"' not in page


def test_the_opening_a_a_check_has_a_line_of_its_own(tmp_path: Path) -> None:
    folder = tmp_path / "campaign"
    build_campaign_ledger(folder)
    check = {"what": "a/a", "verdict": "rejected", "reasons": ["memory +28.82 %"], "looks": 4}
    with Ledger.in_folder(folder) as ledger:
        add_event(ledger, "note", {**check, "pairs": 40})
    paths = write_report(folder)
    html = "".join(_parse(paths.html.read_text()).text)
    assert "unsteady the base against itself: rejected after 40 pairs in 4 look(s)" in html
    assert "memory +28.82 %" in html
    markdown = paths.markdown.read_text()
    assert "A/A check, the base against itself: rejected after 40 pairs" in markdown


def test_a_skipped_a_a_check_says_so_without_pairs(tmp_path: Path) -> None:
    folder = tmp_path / "campaign"
    build_campaign_ledger(folder)
    skipped = {"what": "a/a", "verdict": "skipped", "reasons": ["--no-stability-check"]}
    with Ledger.in_folder(folder) as ledger:
        add_event(ledger, "note", skipped)
    paths = write_report(folder)
    html = "".join(_parse(paths.html.read_text()).text)
    assert "skipped the base against itself: skipped; --no-stability-check" in html
    assert "A/A check, the base against itself: skipped;" in paths.markdown.read_text()
