"""py-inline-helper on a small Python program: one-expression helpers called once per loop
iteration (in a for loop and in a comprehension, with a name and with a subscript argument) are
written in place, and the program, run as a real subprocess, prints exactly what it printed
before. Helpers whose inlining could change what happens are declined with a reason."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from speedproof.agents.heuristic import rules
from support.heuristic import decline_reason, declined, python_same_output
from support.heuristic_python import proposal, subject_of

RULE = "py-inline-helper"

NGRAMS = textwrap.dedent(
    '''\
    import logging

    STOPWORDS = {"a", "an", "the", "of", "and"}


    def is_stopword(word):
        """Whether `word` is too common to count."""
        return word.lower() in STOPWORDS


    def weight(word, bonus):
        return len(word) * 2 + bonus


    def keep(grams):
        kept = []
        for gram in grams:
            parts = gram.split(" ")
            if not is_stopword(parts[0]) and not is_stopword(parts[-1]):
                kept.append((gram, weight(gram, 1)))
        words = [w for w in " ".join(grams).split() if not is_stopword(w)]
        return kept, words


    print(keep(["the cat", "cat sat", "sat of", "a dog", "dog and cat", "Big Dog"]))
    '''
)


def test_one_expression_helpers_are_written_in_place_and_print_the_same(tmp_path: Path) -> None:
    found = proposal(NGRAMS, "keep", RULE)
    assert found is not None
    body = found.answer.source or ""
    assert "if not (parts[0].lower() in STOPWORDS) and not (parts[-1].lower() in STOPWORDS):" in (
        body
    )
    assert "kept.append((gram, (len(gram) * 2 + 1)))" in body
    assert "if not (w.lower() in STOPWORDS)]" in body
    python_same_output(tmp_path, NGRAMS, found)


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (
            ("    return word.lower() in STOPWORDS", '    return logging.getLogger("t") and word'),
            "it calls `logging.getLogger`, which may have effects",
        ),
        (
            ("    return word.lower() in STOPWORDS", "    return (word or word) in STOPWORDS"),
            "would be evaluated other than once, or only sometimes, in place",
        ),
        (
            ("    return word.lower() in STOPWORDS", "    return STOPWORDS[0] == word"),
            "code that may raise runs before `parts[0]` would be evaluated",
        ),
        (("def is_stopword(word):", "@staticmethod\ndef is_stopword(word):"), "decorated"),
        (("    kept = []\n", "    kept = []\n    STOPWORDS = set()\n"), "binds STOPWORDS itself"),
    ],
    ids=["calls-a-logger", "used-twice", "raises-first", "decorated", "shadowed"],
)
def test_a_helper_whose_inlining_could_change_behaviour_is_declined_with_its_reason(
    change: tuple[str, str], words: str
) -> None:
    text = NGRAMS.replace(*change)
    # weight() is inlined whatever happens to is_stopword: leave is_stopword alone in the loop.
    text = text.replace("kept.append((gram, weight(gram, 1)))", "kept.append(gram)")
    text = text.replace("if not is_stopword(w)]", "]")
    assert text.count(change[1]) == 1
    assert words in declined(subject_of(text, "keep"), RULE)


def test_a_helper_from_another_module_is_declined_and_only_suspected_without_the_file() -> None:
    text = NGRAMS.replace("import logging\n", "import logging\nfrom os.path import basename\n")
    text = text.replace("weight(gram, 1)", "basename(gram)")
    text = text.replace("if not is_stopword(parts[0]) and not is_stopword(parts[-1]):", "if 1:")
    text = text.replace("if not is_stopword(w)]", "]")
    assert "basename is imported: its definition is in another file" in decline_reason(
        subject_of(text, "keep"), RULE
    )
    alone = subject_of(NGRAMS, "keep", whole_file=False)
    (finding,) = [f for f in rules.findings(alone) if f.rule == RULE]
    assert not finding.certain and "is_stopword(parts[0])" in finding.evidence
