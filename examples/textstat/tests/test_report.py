from textstat.analysis import TextStats
from textstat.report import histogram, snippet, word_table
from textstat.sources import Record


def stats_of(*lines):
    stats = TextStats()
    for line in lines:
        stats.add(Record(line))
    return stats


def test_word_table_counts_the_lines_holding_each_word_once():
    table = list(word_table(stats_of("fox fox fox", "a red fox", "no", "red"), 2))
    assert table[1:] == [
        "top 2 words (stop words left out)",
        "  rank    count  per 10k    lines  word",
        "     1        4   5000.0        2  fox",
        "     2        2   2500.0        2  red",
    ]


def test_histogram_bars_are_scaled_to_the_busiest_bucket():
    rows = list(histogram(stats_of("x" * 3, "x" * 4, "x" * 25), 10))
    assert rows[1:] == [
        "line lengths (10 characters a bucket)",
        "          0-9        2  ########################################",
        "        10-19        0",
        "        20-29        1  ####################",
    ]


def test_snippets_are_flattened_and_cut():
    assert snippet("two\nlines") == '"two lines"'
    assert snippet("x" * 70) == '"' + "x" * 57 + '..."'
