"""go-sort-keys on a small Go program: sort.Slice and sort.SliceStable comparators that convert
both elements on every comparison get keys computed once per element, and the program, built
and run with the real Go toolchain, prints exactly what it printed before, ties included (many
names differ only in case, so the unstable sort.Slice must break them the same way). Each near
miss is declined with its reason in words."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from support.heuristic import declined, go_same_output
from support.heuristic_go import proposal, subject_of

RULE = "go-sort-keys"

LISTING = textwrap.dedent(
    """\
    package main

    import (
    \t"fmt"
    \t"sort"
    \t"strconv"
    \t"strings"
    )

    type file struct {
    \tName string
    \tSize string
    }

    // order sorts files by name, case-insensitively, and rows by their second column,
    // largest first.
    func order(files []file, rows []string) {
    \tsort.Slice(files, func(i, j int) bool {
    \t\treturn strings.ToLower(files[i].Name) < strings.ToLower(files[j].Name)
    \t})
    \tsort.SliceStable(rows, func(i, j int) bool {
    \t\ta, _ := strconv.Atoi(strings.Fields(rows[i])[1])
    \t\tb, _ := strconv.Atoi(strings.Fields(rows[j])[1])
    \t\treturn a > b
    \t})
    }

    func main() {
    \tvar files []file
    \tvar rows []string
    \tfor i := 0; i < 400; i++ {
    \t\tname := fmt.Sprintf("file%d.txt", (i*37)%60)
    \t\tif i%3 == 0 {
    \t\t\tname = strings.ToUpper(name)
    \t\t}
    \t\tfiles = append(files, file{name, strconv.Itoa(i)})
    \t\trows = append(rows, fmt.Sprintf("row%d %d", i, (i*13)%25))
    \t}
    \torder(files, rows)
    \tfmt.Println(files)
    \tfmt.Println(rows)
    }
    """
)


def test_comparators_that_convert_get_keys_computed_once_and_sort_the_same(
    tmp_path: Path,
) -> None:
    found = proposal(LISTING, "order", RULE)
    assert found is not None and found.answer.kind == "function"
    body = found.answer.source or ""
    assert "keys[k] = strings.ToLower(files[k].Name)" in body
    assert "keys2[k2], _ = strconv.Atoi(strings.Fields(rows[k2])[1])" in body
    assert "sort.Sort(stringKeys{" in body and "sort.Stable(intKeysDescending{" in body
    preamble = found.answer.preamble or ""
    assert "func (s intKeysDescending) Less(i, j int) bool { return s.keys[i] > s.keys[j] }" in (
        preamble
    )
    new = go_same_output(tmp_path, LISTING, found)
    assert "ToLower(files[i]" not in new


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (
            (
                "\t\treturn strings.ToLower(files[i].Name) < strings.ToLower(files[j].Name)",
                "\t\tif files[i].Size != files[j].Size {\n\t\t\treturn files[i].Size < "
                "files[j].Size\n\t\t}\n\t\treturn strings.ToLower(files[i].Name) < "
                "strings.ToLower(files[j].Name)",
            ),
            "compare them (a tie-break)",
        ),
        (
            (
                "strings.ToLower(files[i].Name) < strings.ToLower(files[j].Name)",
                "describe(files[i]) < describe(files[j])",
            ),
            "may have effects or hidden inputs",
        ),
        (
            (
                "strings.ToLower(files[i].Name) < strings.ToLower(files[j].Name)",
                "files[i].Name < files[j].Name",
            ),
            "is read directly or cheaply: nothing costly is recomputed",
        ),
        (
            (
                "strings.ToLower(files[i].Name) < strings.ToLower(files[j].Name)",
                "len(files[i].Name) < len(files[j].Name)",
            ),
            "is read directly or cheaply: nothing costly is recomputed",
        ),
        (
            ("strings.ToLower(files[j].Name)", "strings.ToLower(files[0].Name)"),
            "are not one key of files[i] and files[j]",
        ),
    ],
    ids=["tie-break", "unknown-call", "direct-field", "only-len", "not-symmetric"],
)
def test_a_comparator_whose_keys_cannot_be_shown_pure_is_declined_with_its_reason(
    change: tuple[str, str], words: str
) -> None:
    # The second comparator is made uninteresting, so the first one decides.
    text = LISTING.replace(*change).replace("strconv.Atoi(strings.Fields(rows", "len((rows")
    text = text.replace("\t\ta, _ := len((rows[i])[1])\n", "\t\ta := rows[i]\n")
    text = text.replace("\t\tb, _ := len((rows[j])[1])\n", "\t\tb := rows[j]\n")
    text += "\nfunc describe(f file) string { return f.Name }\n"
    assert change[1] in text
    assert words in declined(subject_of(text, "order"), RULE)
