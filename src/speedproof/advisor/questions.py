"""Everything a model is shown when the advisor asks it something: the fixed yes/no questions,
the system text and the message layout.

Seven cause questions are asked of a hot function, eight hazard questions of a candidate diff.
Every answer is one token ("Yes"/"No"), and the probability is read from that token's
log-probabilities, never from text (`logprobs`). The wording is part of what a baseline
measures, so `questions_digest()` covers the system text, the layout and every question; a
baseline made with other wording is refused (`baseline`), and so is a cached answer (`cache`).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Literal

from speedproof.advisor.subject import Subject
from speedproof.agents.answers import Cause
from speedproof.agents.providers.base import ChatMessage

Kind = Literal["cause", "hazard"]

# Raised whenever the wording or layout below changes: it is part of every digest.
PROMPT_VERSION = "1"

SYSTEM = (
    "You classify source code. Answer the question with exactly one word, Yes or No, "
    "and nothing else."
)

CAUSES: tuple[Cause, ...] = (
    "allocation",
    "unbuffered_io",
    "string_building",
    "fast_path",
    "superlinear",
    "preallocation",
    "repeated_work",
)

HAZARDS: tuple[str, ...] = (
    "ignored_error",
    "dropped_flush",
    "changed_ordering",
    "changed_rounding",
    "shared_buffer",
    "changed_error_path",
    "changed_text",
    "changed_exit",
)


@dataclass(frozen=True)
class Question:
    id: str
    kind: Kind
    text: str

    @property
    def digest(self) -> str:
        """sha256 of this question as a model sees it: wording, system text, layout."""
        return _sha256(
            {
                "version": PROMPT_VERSION,
                "system": SYSTEM,
                "layout": _LAYOUT,
                "id": self.id,
                "kind": self.kind,
                "text": self.text,
            }
        )


CAUSE_QUESTIONS: tuple[Question, ...] = (
    Question(
        "allocation",
        "cause",
        "Does this function allocate memory it could avoid: temporary objects, copies or "
        "conversions made on every call or every loop iteration that could be hoisted, reused "
        "or skipped?",
    ),
    Question(
        "unbuffered_io",
        "cause",
        "Does this function read or write a real file, stream or terminal in small unbuffered "
        "pieces (one system call per item) where buffering would batch them?",
    ),
    Question(
        "string_building",
        "cause",
        "Does this function build a string by repeated concatenation (s = s + part, "
        "s += part) where a builder, a join or a buffer would avoid copying it again and again?",
    ),
    Question(
        "fast_path",
        "cause",
        "Does this function use a general, costly operation (a regular expression, formatted "
        "printing, a full sort, a generic parser) where a simpler exact operation would give the "
        "same result for the common case?",
    ),
    Question(
        "superlinear",
        "cause",
        "Does this function do work that grows faster than its input: nested scans, a linear "
        "search or list membership test inside a loop, or repeated insertion into the middle "
        "of a list?",
    ),
    Question(
        "preallocation",
        "cause",
        "Does this function grow a list, slice or map inside a loop when its final size is "
        "known beforehand, so the collection is reallocated as it grows?",
    ),
    Question(
        "repeated_work",
        "cause",
        "Does this function repeat the same computation on the same inputs on every loop "
        "iteration or every call, where computing it once and reusing it would give the same "
        "result?",
    ),
)

HAZARD_QUESTIONS: tuple[Question, ...] = (
    Question(
        "ignored_error",
        "hazard",
        "Does this change ignore or discard an error that the original code returned, checked "
        "or reported (for example a deferred Flush or Close whose error is dropped)?",
    ),
    Question(
        "dropped_flush",
        "hazard",
        "Can this change leave output unwritten on some path: a buffer that may not be flushed, "
        "a file that may not be closed or synced?",
    ),
    Question(
        "changed_ordering",
        "hazard",
        "Can this change alter the order of output or results (iteration over a map or set, an "
        "unstable sort, concurrency, deduplication through a set)?",
    ),
    Question(
        "changed_rounding",
        "hazard",
        "Can this change alter numeric results or how they are formatted (rounding, precision, "
        "integer versus float division, float32 versus float64)?",
    ),
    Question(
        "shared_buffer",
        "hazard",
        "Does this change reuse a buffer, slice or object that results handed out earlier still "
        "refer to, so later writes can change data already returned or stored?",
    ),
    Question(
        "changed_error_path",
        "hazard",
        "Does this change alter what happens on an error or invalid input (an error no longer "
        "returned, raised or reported, or a different one)?",
    ),
    Question(
        "changed_text",
        "hazard",
        "Does this change alter the exact text the program writes (a different literal, "
        "separator, newline or format verb)?",
    ),
    Question(
        "changed_exit",
        "hazard",
        "Does this change alter how or when the program exits (an exit code, deferred calls "
        "skipped by an exit, a new panic, an early return)?",
    ),
)

ALL_QUESTIONS: tuple[Question, ...] = CAUSE_QUESTIONS + HAZARD_QUESTIONS

# How a flagged hazard reads in a concern shown to the next optimizer call and in the report.
HAZARD_TITLES: dict[str, str] = {
    "ignored_error": "an error may now be ignored",
    "dropped_flush": "output may be left unflushed",
    "changed_ordering": "the order of output may change",
    "changed_rounding": "numbers or their formatting may change",
    "shared_buffer": "results may share a reused buffer",
    "changed_error_path": "error handling may change",
    "changed_text": "the text written may change",
    "changed_exit": "how the program exits may change",
}
BY_ID: dict[str, Question] = {q.id: q for q in ALL_QUESTIONS}

_LAYOUT = (
    "Question: {question}\n\n"
    "{language} function `{name}`:\n```{fence}\n{source}\n```\n"
    "{diff_block}"
    "Answer Yes or No.\n\n<context>\n{context}\n</context>"
)
_DIFF_BLOCK = "\nThe change, as a unified diff:\n```diff\n{diff}\n```\n\n"


def question(question_id: str) -> Question:
    found = BY_ID.get(question_id)
    if found is None:
        raise KeyError(f"no advisor question {question_id!r}; known: {', '.join(BY_ID)}")
    return found


def messages_for(asked: Question, subject: Subject) -> list[ChatMessage]:
    """The system and user messages that ask `asked` about `subject`.

    The user message ends with a `<context>` block naming the question and the subject's
    digest, as every role's message does, so a recorded or scripted server can tell requests
    apart without parsing prose."""
    if asked.kind == "hazard" and subject.diff is None:
        raise ValueError(f"hazard question {asked.id!r} needs a diff to ask about")
    context = json.dumps(
        {"role": "advisor", "question": asked.id, "kind": asked.kind, "subject": subject.digest}
    )
    diff_block = _DIFF_BLOCK.format(diff=subject.diff.rstrip("\n")) if subject.diff else "\n"
    user = _LAYOUT.format(
        question=asked.text,
        language=subject.language.capitalize(),
        name=subject.name,
        fence=subject.language,
        source=subject.source.rstrip("\n"),
        diff_block=diff_block,
        context=context,
    )
    return [ChatMessage(role="system", content=SYSTEM), ChatMessage(role="user", content=user)]


def questions_digest(questions: tuple[Question, ...] = ALL_QUESTIONS) -> str:
    """sha256 over every question's digest, in order: what a baseline is valid for."""
    return _sha256([q.digest for q in questions])


def _sha256(value: object) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
