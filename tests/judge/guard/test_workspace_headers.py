from __future__ import annotations

from speedproof.judge.guard.headers import name_candidates, read_headers, unquote_c


def test_unquote_decodes_git_c_quoting_including_octal_utf8() -> None:
    assert unquote_c('"a/f\\303\\266o"') == "a/föo"
    assert unquote_c('"tab\\there \\"q\\" back\\\\"') == 'tab\there "q" back\\'
    assert unquote_c('"a/x" "b/x"') == "a/x"


def test_unquote_refuses_what_is_not_a_whole_quoted_name() -> None:
    assert unquote_c("a/plain") is None
    assert unquote_c('"unterminated') is None
    assert unquote_c('"bad \\q escape"') is None


def test_undecodable_bytes_survive_as_surrogates() -> None:
    name = unquote_c('"a/\\377x"')
    assert name is not None and name.encode("utf-8", "surrogateescape") == b"a/\xffx"


def test_candidates_cover_every_split_a_tool_might_make() -> None:
    found = name_candidates("a/my file.go\t2024-01-01 10:00:00 +0000")
    assert {"a/my file.go", "a/my", "a/my file.go\t2024-01-01 10:00:00 +0000"} <= found
    assert {"a/x", "b/x"} <= name_candidates("a/x b/x")
    assert {"a/x y", "b/x y"} <= name_candidates('"a/x y" "b/x y"')


def test_every_header_form_yields_names_with_their_line() -> None:
    patch = "\n".join(
        [
            "diff --git a/one b/one",
            "rename from two",
            "rename to three",
            "copy from four",
            "copy to five",
            "Index: six",
            "--- a/seven",
            "+++ b/eight",
            "*** a/nine",
            "rename old ten",
            "rename new eleven",
        ]
    )
    names = {(h.name, h.line) for h in read_headers(patch).names}
    expected = ["a/one", "two", "three", "four", "five", "six", "a/seven", "b/eight", "a/nine"]
    expected += ["ten", "eleven"]
    for line, name in enumerate(expected, start=1):
        assert (name, line) in names


def test_markers_report_modes_binaries_submodules_and_ed_commands() -> None:
    patch = (
        "diff --git a/x b/x\nold mode 100644\nnew mode 100755\nindex 1..2 120000\n"
        "GIT binary patch\n+Subproject commit 0\n3,4d2\n"
    )
    kinds = [(m.kind, m.form, m.line) for m in read_headers(patch).markers]
    assert kinds == [
        ("mode", "old mode", 2),
        ("mode", "new mode", 3),
        ("mode", "index", 4),
        ("binary", "GIT", 5),
        ("submodule", "Subproject commit", 6),
        ("ed", "ed command", 7),
    ]


def test_lines_split_only_on_newline_like_the_tools() -> None:
    # A form feed is not a line break for git or patch, so there is one header here, not two...
    headers = read_headers("--- a/x\x0c--- a/go.mod\n").names
    assert {h.line for h in headers} == {1}
    # ...but GNU patch may end a name at it (C isspace), so the parts are candidates too.
    assert {"a/x", "a/x\x0c--- a/go.mod", "a/go.mod"} <= {h.name for h in headers}
