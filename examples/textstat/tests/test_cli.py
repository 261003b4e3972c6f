import subprocess
import sys
from pathlib import Path

import pytest

from textstat.cli import main
from textstat.sources import Record, read_records

DATA = Path(__file__).parent / "data"
ROOT = Path(__file__).parent.parent


def run(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--top", "5", DATA / "sample.txt"], "sample.expected"),
        (
            ["--top", "5", "--bucket", "20", "--group-by", "rating", "--column", "title",
             "--column", "body", DATA / "reviews.csv"],
            "reviews.expected",
        ),
    ],
)
def test_report_matches_the_expected_one(capsys, args, expected):
    code, out, err = run(capsys, *args)
    assert (code, err) == (0, "")
    assert out == (DATA / expected).read_text(encoding="utf-8")


def test_standard_input_gives_the_same_report_as_the_file(capsys):
    _, from_file, _ = run(capsys, DATA / "sample.txt")
    text = (DATA / "sample.txt").read_bytes()
    result = subprocess.run(
        [sys.executable, "-m", "textstat", "-"],
        input=text,
        capture_output=True,
        cwd=ROOT,
        check=True,
    )
    assert result.stdout.decode("utf-8") == from_file


def test_crlf_line_endings_are_not_part_of_a_line(tmp_path, capsys):
    unix = tmp_path / "unix.txt"
    dos = tmp_path / "dos.txt"
    unix.write_bytes(b"one line\nand another\n")
    dos.write_bytes(b"one line\r\nand another\r\n")
    assert run(capsys, unix)[1] == run(capsys, dos)[1]


def test_csv_records_join_the_chosen_columns(tmp_path):
    path = tmp_path / "notes.csv"
    path.write_text('id,title,body\n1,Hello,"two\nlines"\n2,Bye,\n', encoding="utf-8")
    assert list(read_records(str(path), ["title", "body"], "id")) == [
        Record("Hello two\nlines", "1"),
        Record("Bye ", "2"),
    ]


def test_the_last_csv_column_is_the_default(tmp_path):
    path = tmp_path / "notes.csv"
    path.write_text("id,text\n1,hello there\n", encoding="utf-8")
    assert list(read_records(str(path))) == [Record("hello there")]


def test_several_files_are_counted_together(capsys):
    _, out, _ = run(capsys, DATA / "sample.txt", DATA / "sample.txt")
    assert "files              2\n" in out
    assert "lines              38\n" in out


def test_empty_input_prints_only_the_summary(tmp_path, capsys):
    empty = tmp_path / "empty.txt"
    empty.write_text("", encoding="utf-8")
    code, out, _ = run(capsys, empty)
    assert code == 0
    assert out.splitlines()[-1] == "distinct words     0"


def test_a_missing_file_exits_one(capsys):
    code, _, err = run(capsys, DATA / "no-such.txt")
    assert code == 1
    assert "no-such.txt" in err


def test_a_missing_column_exits_one(capsys):
    code, _, err = run(capsys, "--column", "stars", DATA / "reviews.csv")
    assert code == 1
    assert "no column 'stars'" in err


def test_a_file_that_is_not_utf8_exits_one(tmp_path, capsys):
    latin = tmp_path / "latin1.txt"
    latin.write_bytes("café".encode("latin-1"))
    code, _, err = run(capsys, latin)
    assert code == 1
    assert "not UTF-8" in err


@pytest.mark.parametrize("args", [[], ["--top", "0", "x.txt"], ["--bogus", "x.txt"]])
def test_usage_errors_exit_two(capsys, args):
    with pytest.raises(SystemExit) as exc:
        main(args)
    assert exc.value.code == 2
