from collections import Counter

import pytest

from textstat.analysis import TextStats, length_histogram, top_ngrams, top_words
from textstat.sources import Record


def stats_of(*lines, ngram=2, groups=None):
    stats = TextStats(ngram=ngram)
    for i, line in enumerate(lines):
        stats.add(Record(line, groups[i] if groups else None))
    return stats


def test_counts_words_lines_and_characters():
    stats = stats_of("The cat sat.", "", "The cat ran and the dog sat.")
    assert len(stats.lines) == 3
    assert stats.total_words == 10
    assert stats.characters == 12 + 0 + 28
    assert stats.words["the"] == 3
    assert stats.hapax_legomena() == 3  # ran, and, dog


def test_mean_word_length_weights_by_occurrence():
    stats = stats_of("aa aa b")
    assert stats.mean_word_length() == pytest.approx(5 / 3)


def test_ngrams_do_not_cross_lines():
    stats = stats_of("red fox", "jumps high", ngram=2)
    assert stats.ngrams == Counter({"red fox": 1, "jumps high": 1})


def test_trigrams():
    stats = stats_of("one two three four", ngram=3)
    assert stats.ngrams == Counter({"one two three": 1, "two three four": 1})


def test_shortest_and_longest_skip_blank_lines():
    stats = stats_of("a longer line", "   ", "short", "the longest line here")
    assert stats.shortest_and_longest() == (2, 3)


def test_shortest_and_longest_of_nothing():
    assert stats_of("", "  ").shortest_and_longest() is None


def test_groups_keep_their_own_counts():
    stats = stats_of("tent leaks", "tent is dry", "headlamp", groups=["1", "5", "5"])
    assert sorted(stats.groups) == ["1", "5"]
    assert stats.group_records == {"1": 1, "5": 2}
    assert stats.group_words["5"] == Counter({"tent": 1, "is": 1, "dry": 1, "headlamp": 1})


def test_top_words_leave_out_stopwords_and_break_ties_alphabetically():
    counts = Counter({"the": 9, "zebra": 3, "apple": 3, "moon": 5, "and": 7})
    assert top_words(counts, 3) == [("moon", 5), ("apple", 3), ("zebra", 3)]


def test_top_ngrams_leave_out_those_at_a_stopword_edge():
    counts = Counter({"of the": 9, "the sea": 8, "salt water": 2, "salt of salt": 4})
    assert top_ngrams(counts, 5) == [("salt of salt", 4), ("salt water", 2)]


def test_length_histogram_buckets_are_closed_ranges():
    assert length_histogram([0, 9, 10, 25], 10) == [(0, 9, 2), (10, 19, 1), (20, 29, 1)]


def test_length_histogram_keeps_empty_buckets():
    assert length_histogram([1, 31], 10) == [(0, 9, 1), (10, 19, 0), (20, 29, 0), (30, 39, 1)]
