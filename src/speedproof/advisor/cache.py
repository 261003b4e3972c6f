"""Answers kept in SQLite, keyed by (model id, question digest, subject digest).

A key changes whenever anything the answer depends on changes: another build, other wording
(the question digest covers the system text and layout), another function text or diff. The
static advisor is cheap and is not cached. Baselines and the drift canary never read the cache:
they exist to see what the build answers now.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType

from speedproof.advisor.answers import Answer, Answerer
from speedproof.advisor.questions import Question
from speedproof.advisor.subject import Subject

CACHE_FILE = "advisor-answers.sqlite"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS answers (
    model TEXT NOT NULL,
    question TEXT NOT NULL,
    subject TEXT NOT NULL,
    question_id TEXT NOT NULL,
    probability REAL NOT NULL,
    evidence TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (model, question, subject)
)
"""


class AnswerCache:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._db = sqlite3.connect(path)
        self._db.execute(_SCHEMA)
        self._db.commit()

    @classmethod
    def in_folder(cls, folder: Path) -> AnswerCache:
        return cls(folder / CACHE_FILE)

    def get(self, model: str, asked: Question, subject: Subject) -> Answer | None:
        row = self._db.execute(
            "SELECT question_id, probability, evidence FROM answers"
            " WHERE model = ? AND question = ? AND subject = ?",
            (model, asked.digest, subject.digest),
        ).fetchone()
        if row is None:
            return None
        return Answer(str(row[0]), float(row[1]), tuple(json.loads(row[2])))

    def put(self, model: str, asked: Question, subject: Subject, answer: Answer) -> None:
        self._db.execute(
            "INSERT OR REPLACE INTO answers VALUES (?,?,?,?,?,?,?)",
            (
                model,
                asked.digest,
                subject.digest,
                answer.question,
                answer.probability,
                json.dumps(list(answer.evidence)),
                datetime.now(UTC).isoformat(),
            ),
        )
        self._db.commit()

    def count(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM answers").fetchone()[0])

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> AnswerCache:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class CachedAnswerer:
    """An answerer behind the cache: a hit is returned, a miss is asked and kept."""

    def __init__(self, inner: Answerer, cache: AnswerCache) -> None:
        self.inner = inner
        self.cache = cache
        self.hits = 0

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    def answer(self, asked: Question, subject: Subject) -> Answer:
        found = self.cache.get(self.model_id, asked, subject)
        if found is not None:
            self.hits += 1
            return found
        answer = self.inner.answer(asked, subject)
        self.cache.put(self.model_id, asked, subject, answer)
        return answer
