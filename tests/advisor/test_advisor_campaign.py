"""The advisor in a campaign's seats: cause flags with vetoes for hot functions, the ranking
code computes from them, hazard concerns for a diff, what the ledger keeps, and the proof that
none of it can reach the policy."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from speedproof.advisor import (
    AdvisorConfigError,
    BaselineMismatch,
    StaticAdvisor,
    measure_baseline,
    open_advisor,
    rank,
    score,
)
from speedproof.advisor.analyst import AdvisorAnalyst, AdvisorReviewer
from speedproof.advisor.baseline import Baseline, save_baseline
from speedproof.advisor.client import EndpointAdvisor
from speedproof.advisor.records import CONCERN_SOURCE, EVENT_KIND, record_causes, record_hazards
from speedproof.advisor.reference import load_reference
from speedproof.advisor.subject import subject_of
from speedproof.discovery import HotFunction
from speedproof.ledger import Ledger
from speedproof.manifest import Advisor as AdvisorSettings
from support.advisor import logprob_reply
from support.model_server import ChatRequest, ModelServer, Reply
from support.paths import ROOT

SRC = ROOT / "src"

PRINT_PATHS = HotFunction(
    name="main.printPaths",
    file="main.go",
    start_line=10,
    end_line=14,
    self_pct=10.0,
    cum_pct=12.0,
    samples=40,
    source="func printPaths(paths []string) {\n\tfor _, p := range paths {\n"
    "\t\tfmt.Println(p)\n\t}\n}\n",
)
WRITE_BYTE = HotFunction(
    name="json.(*encoder).writeByte",
    file="encoder.go",
    start_line=10,
    end_line=12,
    self_pct=35.0,
    cum_pct=35.0,
    samples=140,
    source="func (e *encoder) writeByte(b byte) {\n\te.w.WriteByte(b)\n}\n",
)
PARSE = HotFunction(
    name="main.parse",
    file="main.go",
    start_line=20,
    end_line=22,
    self_pct=30.0,
    cum_pct=30.0,
    samples=120,
    source="func parse(s string) int {\n\treturn len(s)\n}\n",
)
FILES = {
    "encoder.go": 'package json\n\nimport "bytes"\n\n'
    + "type encoder struct {\n\tw *bytes.Buffer\n}\n\n"
    + WRITE_BYTE.source,
    "main.go": "package main\n",
}
GRON_DIFF = (
    "--- a/main.go\n+++ b/main.go\n@@ -10,5 +10,7 @@\n func printPaths(paths []string) {\n"
    "+\tw := bufio.NewWriter(os.Stdout)\n+\tdefer w.Flush()\n \tfor _, p := range paths {\n"
    "-\t\tfmt.Println(p)\n+\t\tfmt.Fprintln(w, p)\n \t}\n }\n"
)


class Build:
    """A fake build that knows the reference set's labels and answers anything else from a
    script: (question, subject digest) -> P(yes), 0.1 when not scripted."""

    def __init__(self) -> None:
        reference = load_reference()
        self.labels: dict[str, tuple[str, ...]] = {}
        for index, item in enumerate(reference.items):
            self.labels[item.subject.digest] = (*item.shows, str(index % 3))
            hazard = item.hazard_subject
            if hazard is not None:
                self.labels[hazard.digest] = (*item.hazards, str(index % 3))
        self.script: dict[tuple[str, str], float] = {}

    def __call__(self, request: ChatRequest) -> Reply:
        context = request.context or {}
        question, digest = str(context["question"]), str(context["subject"])
        if (question, digest) in self.script:
            return logprob_reply(self.script[(question, digest)])
        labels = self.labels.get(digest)
        if labels is None:
            return logprob_reply(0.1)
        jitter = int(labels[-1]) * 0.03
        return logprob_reply((0.85 if question in labels else 0.08) + jitter)


@pytest.fixture(autouse=True)
def _no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[ModelServer, Build]]:
    build = Build()
    with ModelServer(models=["build-a", "build-b"]) as server:
        server.answer_with(build)
        yield server, build


@pytest.fixture(scope="module")
def baseline(served: tuple[ModelServer, Build]) -> Baseline:
    server, _ = served
    return measure_baseline(endpoint(server), load_reference())


@pytest.fixture(autouse=True)
def _fresh_script(served: tuple[ModelServer, Build]) -> None:
    served[1].script.clear()


def endpoint(server: ModelServer, model: str = "build-a") -> EndpointAdvisor:
    return EndpointAdvisor(f"openai:{model}", base_url=server.openai_url, max_retries=0)


def script(build: Build, function: HotFunction, answers: dict[str, float], diff: str = "") -> None:
    subject = subject_of(function)
    if diff:
        subject = subject.with_diff(diff)
    build.script.update({(q, subject.digest): p for q, p in answers.items()})


def test_a_cause_is_flagged_only_past_both_gates(
    served: tuple[ModelServer, Build], baseline: Baseline
) -> None:
    server, build = served
    script(build, PRINT_PATHS, {"unbuffered_io": 0.95, "allocation": 0.45, "superlinear": 0.6})
    flags = AdvisorAnalyst(endpoint(server), baseline).causes([PRINT_PATHS])
    found = flags.of("main.printPaths")
    assert found is not None
    by_cause = {c.cause: c for c in found.answers}
    assert by_cause["unbuffered_io"].flagged
    assert by_cause["unbuffered_io"].z > 0.5
    assert by_cause["allocation"].outcome == "below-p"
    assert found.flagged[0].cause == "unbuffered_io"
    usual = baseline.usual("superlinear")
    assert by_cause["superlinear"].z == pytest.approx((0.6 - usual.mean) / usual.sd, abs=1e-3)


def test_a_vetoed_flag_is_recorded_with_its_reason_and_never_shown_to_a_role(
    served: tuple[ModelServer, Build], baseline: Baseline
) -> None:
    server, build = served
    script(build, WRITE_BYTE, {"unbuffered_io": 0.97})
    analyst = AdvisorAnalyst(endpoint(server), baseline, read_file=FILES.__getitem__)
    flags = analyst.causes([WRITE_BYTE])
    found = flags.of(WRITE_BYTE.name)
    assert found is not None
    [vetoed] = found.vetoed
    assert vetoed.cause == "unbuffered_io" and vetoed.probability == pytest.approx(0.97)
    assert "field w of encoder is *bytes.Buffer" in (vetoed.veto or "")
    assert not found.flagged
    assert flags.cause_views() == []


def test_flags_order_the_targets_by_a_score_of_flag_and_hotness(
    served: tuple[ModelServer, Build], baseline: Baseline
) -> None:
    server, build = served
    script(build, PRINT_PATHS, {"unbuffered_io": 0.95})
    script(build, WRITE_BYTE, {"unbuffered_io": 0.97})
    analyst = AdvisorAnalyst(endpoint(server), baseline, read_file=FILES.__getitem__)
    hot = [WRITE_BYTE, PARSE, PRINT_PATHS]
    flags = analyst.causes(hot)
    # writeByte's flag was vetoed: 35 x 0.25; parse unflagged: 30 x 0.25;
    # printPaths flagged at 0.95: 10 x (0.25 + 0.75 x 0.95) = 9.625.
    assert score(PRINT_PATHS, flags) == pytest.approx(9.625, abs=1e-3)
    assert [f.name for f in rank(hot, flags)] == [
        "main.printPaths",
        "json.(*encoder).writeByte",
        "main.parse",
    ]
    assert [f.name for f in rank(hot, None)] == [
        f.name for f in sorted(hot, key=lambda f: -f.self_pct)
    ]
    views = flags.cause_views("main.printPaths")
    assert views[0]["cause"] == "unbuffered_io" and views[0]["source"] == "advisor"


def test_only_the_first_max_functions_are_asked(
    served: tuple[ModelServer, Build], baseline: Baseline
) -> None:
    server, _ = served
    before = len(server.chat_requests)
    flags = AdvisorAnalyst(endpoint(server), baseline, max_functions=1).causes([PARSE, PRINT_PATHS])
    assert [f.function for f in flags.functions] == ["main.parse"]
    assert len(server.chat_requests) - before == 7


def test_hazards_become_concerns_and_events_in_the_ledger(
    served: tuple[ModelServer, Build], baseline: Baseline, tmp_path: Path
) -> None:
    server, build = served
    script(build, PRINT_PATHS, {"unbuffered_io": 0.95})
    script(build, PRINT_PATHS, {"ignored_error": 0.96, "dropped_flush": 0.3}, diff=GRON_DIFF)
    review = AdvisorReviewer(endpoint(server), baseline).hazards(GRON_DIFF, PRINT_PATHS)
    assert [h.hazard for h in review.flagged] == ["ignored_error"]
    flags = AdvisorAnalyst(endpoint(server), baseline).causes([PRINT_PATHS, PARSE])
    with Ledger.in_folder(tmp_path) as ledger:
        ledger.start_campaign("c1", target="t", repo=tmp_path, base_rev="abc", options={})
        candidate = ledger.start_candidate(
            origin="campaign",
            target="t",
            repo=tmp_path,
            base_rev="abc",
            patch_sha256="0" * 64,
            diff=GRON_DIFF,
            sandbox="none",
            facts={},
            campaign="c1",
        )
        record_causes(ledger, "c1", flags, [PRINT_PATHS, PARSE], parent="abc")
        record_hazards(ledger, "c1", candidate, review)
        events = ledger.events("c1", kind=EVENT_KIND)
        concerns = ledger.concerns(candidate)
    causes, hazards = events[0]["body"], events[1]["body"]
    assert causes["what"] == "causes" and causes["model"] == "openai:build-a"
    assert causes["functions"][0]["flagged"] == ["unbuffered_io"]
    assert causes["functions"][0]["rank"] == 1
    assert len(causes["functions"][0]["causes"]) == 7
    assert hazards["what"] == "hazards" and hazards["flagged"] == ["ignored_error"]
    assert events[1]["candidate_id"] == candidate
    [concern] = concerns
    assert concern["source"] == CONCERN_SOURCE and concern["severity"] == "high"
    assert "an error may now be ignored" in concern["text"]


def test_a_baseline_of_one_build_is_refused_for_another(
    served: tuple[ModelServer, Build], baseline: Baseline, tmp_path: Path
) -> None:
    server, _ = served
    with pytest.raises(BaselineMismatch, match="openai:build-a"):
        AdvisorAnalyst(endpoint(server, "build-b"), baseline)
    save_baseline(baseline, tmp_path / "a.json")
    settings = AdvisorSettings(model="openai:build-b", base_url=server.openai_url)
    with pytest.raises(BaselineMismatch):
        open_advisor(settings, baseline=tmp_path / "a.json")
    with pytest.raises(AdvisorConfigError, match="has no baseline"):
        open_advisor(settings)
    opened = open_advisor(
        AdvisorSettings(model="openai:build-a", base_url=server.openai_url),
        baseline=tmp_path / "a.json",
        cache_dir=tmp_path / "cache",
    )
    assert opened.answerer.model_id == "openai:build-a"


def test_without_an_endpoint_the_static_advisor_gives_the_same_shape() -> None:
    opened = open_advisor(AdvisorSettings())
    assert isinstance(opened.answerer, StaticAdvisor)
    flags = opened.analyst(read_file=FILES.__getitem__).causes([PRINT_PATHS, WRITE_BYTE])
    printing = flags.of(PRINT_PATHS.name)
    assert printing is not None and [c.cause for c in printing.flagged] == ["unbuffered_io"]
    assert "fmt.Println(p) in a loop" in printing.flagged[0].evidence[0]
    review = opened.reviewer().hazards(GRON_DIFF, PRINT_PATHS)
    assert [h.hazard for h in review.flagged] == ["ignored_error"]
    assert flags.model == "static-v1"


def _speedproof_imports(module: str) -> set[str]:
    path = SRC / (module.replace(".", "/") + ".py")
    if not path.exists():
        path = SRC / module.replace(".", "/") / "__init__.py"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("speedproof"))
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("speedproof"):
            found.add(str(node.module))
    return found


def _closure(module: str) -> set[str]:
    seen, todo = set(), [module]
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        todo.extend(_speedproof_imports(current) - seen)
    return seen


def test_nothing_from_the_advisor_reaches_the_policy() -> None:
    for judge in ("speedproof.judge.policy.decide", "speedproof.judge.policy.evidence"):
        reached = _closure(judge)
        assert not any(m.startswith("speedproof.advisor") for m in reached), reached
    advisor_modules = {
        f"speedproof.advisor.{p.stem}"
        for p in (SRC / "speedproof" / "advisor").glob("*.py")
        if p.stem != "__init__"
    }
    forbidden = {
        "speedproof.judge.policy.decide",
        "speedproof.judge.policy.evidence",
        "speedproof.judge.evaluate",
        "speedproof.judge.patches",
    }
    for module in advisor_modules:
        assert not _speedproof_imports(module) & forbidden, module
    from speedproof.judge.policy.evidence import Evidence

    words = {"advisor", "concern", "flag", "hazard", "cause"}
    assert not {f for f in Evidence.__dataclass_fields__ if any(w in f for w in words)}
