"""Counting: words, n-grams, groups, and the figures the report is made of."""

from __future__ import annotations

from collections import Counter

from textstat.sources import Record
from textstat.words import is_stopword, words


class TextStats:
    """Everything counted over the records of all inputs, in the order they were read."""

    def __init__(self, ngram: int = 2) -> None:
        self.ngram = ngram
        self.files = 0
        self.lines: list[str] = []
        self.line_words: list[list[str]] = []
        self.characters = 0
        self.words: Counter[str] = Counter()
        self.ngrams: Counter[str] = Counter()
        self.groups: list[str] = []  # in the order first seen
        self.group_records: dict[str, int] = {}
        self.group_words: dict[str, Counter[str]] = {}

    def add(self, record: Record) -> None:
        tokens = words(record.text)
        self.lines.append(record.text)
        self.line_words.append(tokens)
        self.characters += len(record.text)
        self.words.update(tokens)
        if self.ngram > 1:
            for i in range(len(tokens) - self.ngram + 1):
                self.ngrams[" ".join(tokens[i : i + self.ngram])] += 1
        if record.group is not None:
            if record.group not in self.groups:
                self.groups.append(record.group)
                self.group_records[record.group] = 0
                self.group_words[record.group] = Counter()
            self.group_records[record.group] += 1
            self.group_words[record.group].update(tokens)

    @property
    def total_words(self) -> int:
        return sum(self.words.values())

    def hapax_legomena(self) -> int:
        """How many words occur exactly once."""
        return sum(1 for count in self.words.values() if count == 1)

    def mean_word_length(self) -> float:
        letters = sum(len(word) * count for word, count in self.words.items())
        return letters / self.total_words if self.total_words else 0.0

    def shortest_and_longest(self) -> tuple[int, int] | None:
        """Indexes of the shortest and the longest of the lines that are not blank."""
        by_length = sorted(
            (i for i, line in enumerate(self.lines) if line.strip()),
            key=lambda i: len(self.lines[i]),
        )
        if not by_length:
            return None
        return by_length[0], by_length[-1]

    def lines_containing(self, word: str) -> int:
        """In how many lines `word` occurs."""
        return sum(1 for tokens in self.line_words if word in tokens)


def top_words(counts: Counter[str], n: int) -> list[tuple[str, int]]:
    """The `n` most frequent words that are not stop words; ties in alphabetical order."""
    content = [(word, count) for word, count in counts.items() if not is_stopword(word)]
    content.sort(key=lambda item: (-item[1], item[0]))
    return content[:n]


def top_ngrams(counts: Counter[str], n: int) -> list[tuple[str, int]]:
    """The `n` most frequent n-grams that neither start nor end with a stop word."""
    kept = []
    for gram, count in counts.items():
        parts = gram.split(" ")
        if not is_stopword(parts[0]) and not is_stopword(parts[-1]):
            kept.append((gram, count))
    kept.sort(key=lambda item: (-item[1], item[0]))
    return kept[:n]


def length_histogram(lengths: list[int], width: int) -> list[tuple[int, int, int]]:
    """(first, last, count) for each bucket of `width` lengths, up to the longest."""
    rows = []
    for start in range(0, max(lengths) + 1, width):
        count = sum(1 for n in lengths if start <= n < start + width)
        rows.append((start, start + width - 1, count))
    return rows
