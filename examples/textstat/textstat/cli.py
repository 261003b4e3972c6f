"""Command line: `python -m textstat [options] FILE...`."""

from __future__ import annotations

import argparse
import sys

from textstat import __version__
from textstat.analysis import TextStats
from textstat.report import report
from textstat.sources import InputError, read_records


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="textstat",
        description="Word frequencies, n-grams and line statistics for text and CSV files.",
    )
    parser.add_argument("files", nargs="+", metavar="FILE", help="text or .csv file; - for stdin")
    parser.add_argument("--top", type=int, default=20, help="rows in the word tables")
    parser.add_argument(
        "--ngram", type=int, default=2, help="length of the word sequences to count (1: none)"
    )
    parser.add_argument(
        "--column",
        action="append",
        metavar="NAME",
        help="CSV column holding text (repeatable; default: the last column)",
    )
    parser.add_argument("--group-by", metavar="NAME", help="CSV column to break the counts down by")
    parser.add_argument(
        "--bucket", type=int, default=10, help="width of the line-length histogram buckets"
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    args = parser.parse_args(argv)
    for option in ("top", "ngram", "bucket"):
        if getattr(args, option) < 1:
            parser.error(f"--{option} must be at least 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    # The report is UTF-8 whatever the locale says, so it is the same on every machine.
    sys.stdout.reconfigure(encoding="utf-8")  # type: ignore[union-attr]
    stats = TextStats(ngram=args.ngram)
    try:
        for name in args.files:
            stats.files += 1
            for record in read_records(name, args.column, args.group_by):
                stats.add(record)
    except (OSError, InputError) as exc:
        print(f"textstat: {exc}", file=sys.stderr)
        return 1
    for line in report(stats, top=args.top, bucket=args.bucket):
        print(line)
    return 0
