"""The offline static advisor: the seven causes in Python and Go, the hazards in diffs."""

from __future__ import annotations

import pytest

from speedproof.advisor.baseline import shipped_baseline
from speedproof.advisor.gates import Gates, judge
from speedproof.advisor.questions import CAUSE_QUESTIONS, HAZARD_QUESTIONS, question
from speedproof.advisor.reference import load_reference
from speedproof.advisor.static import P_NONE, STATIC_MODEL, StaticAdvisor
from speedproof.advisor.subject import Subject

ADVISOR = StaticAdvisor()


def p(cause: str, language: str, source: str, diff: str | None = None) -> float:
    subject = Subject.of(language, "pkg.f", source, diff)  # type: ignore[arg-type]
    return ADVISOR.answer(question(cause), subject).probability


PY_CASES = [
    ("allocation", "def f(xs):\n    for x in xs:\n        if x in [1, 2, 3]:\n            g(x)\n"),
    ("unbuffered_io", "def f(xs):\n    for x in xs:\n        print(x, flush=True)\n"),
    (
        "string_building",
        "def f(xs):\n    s = ''\n    for x in xs:\n        s += str(x)\n    return s\n",
    ),
    ("fast_path", "def f(lines):\n    return [l for l in lines if re.search('WARN', l)]\n"),
    ("superlinear", "def f(xs, ys):\n    return [x for x in xs if x in list(ys)]\n"),
    (
        "preallocation",
        "def f(xs):\n    out = []\n    for x in xs:\n        out.append(x * 2)\n    return out\n",
    ),
    ("repeated_work", "def f(xs, ys):\n    for x in xs:\n        m = max(ys)\n        g(x, m)\n"),
]

GO_CASES = [
    ("allocation", "func f(xs []string) {\n\tfor _, x := range xs {\n\t\tg([]byte(x))\n\t}\n}\n"),
    (
        "unbuffered_io",
        "func f(xs []string) {\n\tfor _, x := range xs {\n\t\tfmt.Println(x)\n\t}\n}\n",
    ),
    (
        "string_building",
        'func f(xs []string) string {\n\ts := ""\n\tfor _, x := range xs {\n\t\ts += x\n\t}\n'
        "\treturn s\n}\n",
    ),
    ("fast_path", 'func f(n int) string {\n\treturn fmt.Sprintf("%d", n)\n}\n'),
    (
        "superlinear",
        "func f(xs, ys []int) int {\n\tc := 0\n\tfor _, x := range xs {\n\t\tfor _, y := range ys "
        "{\n\t\t\tif x == y {\n\t\t\t\tc++\n\t\t\t}\n\t\t}\n\t}\n\treturn c\n}\n",
    ),
    (
        "preallocation",
        "func f(xs []int) []int {\n\tout := make([]int, 0)\n\tfor _, x := range xs {\n\t\tout = "
        "append(out, x*2)\n\t}\n\treturn out\n}\n",
    ),
    (
        "repeated_work",
        "func f(s string) bool {\n\tre := regexp.MustCompile(`^a+$`)\n"
        "\treturn re.MatchString(s)\n}\n",
    ),
]

CLEAN = {
    "python": "def f(xs):\n    return sum(xs) / len(xs) if xs else 0.0\n",
    "go": "func f(a, b int) int {\n\tif a > b {\n\t\treturn a\n\t}\n\treturn b\n}\n",
}


@pytest.mark.parametrize(("cause", "source"), PY_CASES)
def test_each_python_cause_is_detected_and_absent_from_a_clean_function(
    cause: str, source: str
) -> None:
    assert p(cause, "python", source) > 0.5
    assert p(cause, "python", CLEAN["python"]) == P_NONE


@pytest.mark.parametrize(("cause", "source"), GO_CASES)
def test_each_go_cause_is_detected_and_absent_from_a_clean_function(
    cause: str, source: str
) -> None:
    assert p(cause, "go", source) > 0.5
    assert p(cause, "go", CLEAN["go"]) == P_NONE


def test_a_membership_test_in_a_set_is_not_superlinear() -> None:
    source = "def f(xs, ys):\n    seen = set(ys)\n    return [x for x in xs if x in seen]\n"
    assert p("superlinear", "python", source) == P_NONE


def test_a_loop_variable_makes_a_call_vary_so_it_is_not_repeated_work() -> None:
    source = "def f(xs):\n    for x in xs:\n        g(sorted(x))\n"
    assert p("repeated_work", "python", source) == P_NONE


def test_the_answer_carries_the_evidence_with_file_lines() -> None:
    subject = Subject.of("go", "main.f", GO_CASES[1][1], start_line=40)
    found = ADVISOR.answer(question("unbuffered_io"), subject)
    assert found.evidence == (
        "fmt.Println(x) in a loop: fmt.Println writes to os.Stdout (line 42)",
    )


GRON_DIFF = """\
--- a/main.go
+++ b/main.go
@@ -1,5 +1,7 @@
 func printPaths(paths []string) {
+\tw := bufio.NewWriter(os.Stdout)
+\tdefer w.Flush()
 \tfor _, p := range paths {
-\t\tfmt.Println(p)
+\t\tfmt.Fprintln(w, p)
 \t}
 }
"""


def test_a_deferred_flush_that_drops_its_error_is_an_ignored_error_hazard() -> None:
    source = (
        "func printPaths(paths []string) {\n\tfor _, p := range paths {\n"
        "\t\tfmt.Println(p)\n\t}\n}\n"
    )
    subject = Subject.of("go", "main.printPaths", source, GRON_DIFF)
    found = ADVISOR.answer(question("ignored_error"), subject)
    assert found.probability > 0.8
    assert "defer w.Flush()" in found.evidence[0]
    assert ADVISOR.answer(question("dropped_flush"), subject).probability == P_NONE


def test_each_hazard_of_the_reference_fixes_is_detected_where_it_was_written() -> None:
    reference = load_reference()
    for item in reference.fixes:
        subject = item.hazard_subject
        assert subject is not None
        for hazard in item.hazards:
            assert ADVISOR.answer(question(hazard), subject).probability > 0.5, (item.id, hazard)


def test_the_static_flags_of_every_written_reference_item_are_what_it_was_written_to_show() -> None:
    reference, baseline, gates = load_reference(), shipped_baseline(), Gates()
    assert baseline.model == STATIC_MODEL
    for item in reference.items:
        if item.origin != "written":
            continue
        flagged = {
            q.id
            for q in CAUSE_QUESTIONS
            if judge(baseline.answers[q.id][item.id], baseline.usual(q.id), gates.cause).passed
        }
        assert flagged == set(item.shows), item.id


def test_the_static_advisor_is_deterministic() -> None:
    reference = load_reference()
    item = reference.by_id()["go-println-loop"]
    subject = item.hazard_subject
    assert subject is not None
    first = [StaticAdvisor().answer(q, subject) for q in HAZARD_QUESTIONS]
    second = [StaticAdvisor().answer(q, subject) for q in HAZARD_QUESTIONS]
    assert first == second
