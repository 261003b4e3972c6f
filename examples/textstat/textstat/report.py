"""The plain-text report, one line at a time."""

from __future__ import annotations

from collections.abc import Iterator

from textstat.analysis import TextStats, length_histogram, top_ngrams, top_words

BAR_WIDTH = 40
SNIPPET = 60
NGRAM_NAMES = {2: "bigrams", 3: "trigrams"}


def report(stats: TextStats, top: int, bucket: int) -> Iterator[str]:
    yield from summary(stats)
    if not stats.total_words:
        return
    yield from word_table(stats, top)
    if stats.ngram > 1:
        yield from ngram_table(stats, top)
    yield from histogram(stats, bucket)
    if stats.groups:
        yield from group_table(stats)


def summary(stats: TextStats) -> Iterator[str]:
    distinct = len(stats.words)
    yield f"files              {stats.files}"
    yield f"lines              {len(stats.lines)}"
    yield f"words              {stats.total_words}"
    yield f"characters         {stats.characters}"
    yield f"distinct words     {distinct}"
    if distinct:
        hapax = stats.hapax_legomena()
        yield f"hapax legomena     {hapax} ({100 * hapax / distinct:.1f}% of distinct words)"
        yield f"mean word length   {stats.mean_word_length():.2f}"
    ends = stats.shortest_and_longest()
    if ends is not None:
        for label, index in zip(("shortest line", "longest line"), ends, strict=True):
            line = stats.lines[index]
            yield f"{label:<18} {len(line)} chars, line {index + 1}: {snippet(line)}"


def word_table(stats: TextStats, top: int) -> Iterator[str]:
    ranked = top_words(stats.words, top)
    total = stats.total_words
    yield ""
    yield f"top {len(ranked)} words (stop words left out)"
    yield f"  {'rank':>4}  {'count':>7}  {'per 10k':>7}  {'lines':>7}  word"
    for rank, (word, count) in enumerate(ranked, start=1):
        per_10k = 10_000 * count / total
        lines = stats.lines_containing(word)
        yield f"  {rank:>4}  {count:>7}  {per_10k:>7.1f}  {lines:>7}  {word}"


def ngram_table(stats: TextStats, top: int) -> Iterator[str]:
    ranked = top_ngrams(stats.ngrams, top)
    name = NGRAM_NAMES.get(stats.ngram, f"{stats.ngram}-grams")
    yield ""
    yield f"top {len(ranked)} {name} (none starting or ending with a stop word)"
    yield f"  {'count':>7}  {name[:-1]}"
    for gram, count in ranked:
        yield f"  {count:>7}  {gram}"


def histogram(stats: TextStats, bucket: int) -> Iterator[str]:
    rows = length_histogram([len(line) for line in stats.lines], bucket)
    busiest = max(count for _, _, count in rows)
    yield ""
    yield f"line lengths ({bucket} characters a bucket)"
    for first, last, count in rows:
        bar = ""
        for _ in range(count * BAR_WIDTH // busiest):
            bar += "#"
        yield f"  {f'{first}-{last}':>11}  {count:>7}  {bar}".rstrip()


def group_table(stats: TextStats) -> Iterator[str]:
    groups = sorted(stats.groups)
    yield ""
    yield f"by group ({len(groups)} groups)"
    yield f"  {'group':<12}  {'records':>7}  {'words':>8}  {'words/record':>12}  top words"
    for group in groups:
        records = stats.group_records[group]
        counts = stats.group_words[group]
        total = sum(counts.values())
        best = ", ".join(word for word, _ in top_words(counts, 3))
        yield f"  {group:<12}  {records:>7}  {total:>8}  {total / records:>12.1f}  {best}"


def snippet(line: str) -> str:
    """`line` on one line and at most SNIPPET characters long, quoted."""
    flat = " ".join(line.split())
    if len(flat) > SNIPPET:
        flat = flat[: SNIPPET - 3] + "..."
    return f'"{flat}"'
