"""Candidates that are right on every input the judge used to compare and wrong elsewhere.

Each builds a diff against a fresh copy of a bundled example (`speedproof.examples.materialise`)
and leaves the copy as it was. Each also carries a real speedup, so that a judge that compares
only the declared workloads and their twins accepts it:

- `endpoint_table_patch` (logstat): endpoints read from a table file the patch adds beside the
  code (outside every protected folder), keyed by request target, built from every log in the
  repository; a target not in the table gets a cheap guess that is wrong for hex ids;
- `hand_parser_patch` (logstat): the log-line regexp replaced by a hand-written parser that
  agrees on every line of every bundled log and on the parser tests, and takes a status that is
  not three digits, a negative size or a request time without a fraction;
- `no_slow_check_patch` (logstat): the regexp hoisted (the bundled speedup) and the check that
  `-slow` is not negative deleted, which no workload and no test needs;
- `harness_check_patch` (textstat): stop words in a set (the bundled speedup) and, except under
  pytest, CSV rows read by position, which fails on a row with a missing value. The module name
  is built at run time (`"_py" + "test" in sys.modules`), which the static harness-probe check
  cannot see (docs/adr/0060): the variants gate does not need to read the code.
"""

from __future__ import annotations

import re
from pathlib import Path

from support.git import git, git_run

_ID_SEGMENT = re.compile(r"^[0-9a-f-]*[0-9][0-9a-f-]*$")
# logstat's linePattern: the request target is group 4.
_LINE = re.compile(
    r'^(\S+) \S+ \S+ \[([^\]]+)\] "(\S+) (\S+) [^"]*" (\d{3}) (\d+|-) "[^"]*" "[^"]*"'
    r"(?: (\d+\.\d+|-))?$"
)


def _diff(repo: Path, edits: dict[str, str]) -> str:
    """The diff that writes `edits` (path → new text) into `repo`, which is left as it was."""
    originals = {
        name: (repo / name).read_text() if (repo / name).exists() else None for name in edits
    }
    try:
        for name, text in edits.items():
            (repo / name).write_text(text)
            if originals[name] is None:
                git(repo, "add", "-N", name)
        return git_run(repo, "diff").stdout
    finally:
        for name, text in originals.items():
            if text is None:
                git(repo, "rm", "-q", "--cached", name)
                (repo / name).unlink()
            else:
                (repo / name).write_text(text)


def _endpoint(target: str) -> str:
    """logstat's normalizeEndpoint, for the table."""
    segments = target.split("?", 1)[0].split("/")
    return "/".join(":id" if _ID_SEGMENT.match(s) else s for s in segments)


_TABLE_GO = """
// endpointTable holds the endpoint of every request target seen so far, read once from
// endpoints.tsv beside the program's sources.
var endpointTable = loadEndpoints()

func loadEndpoints() map[string]string {
	table := map[string]string{}
	data, err := os.ReadFile("endpoints.tsv")
	if err != nil {
		return table
	}
	for _, line := range strings.Split(string(data), "\\n") {
		if target, endpoint, ok := strings.Cut(line, "\\t"); ok {
			table[target] = endpoint
		}
	}
	return table
}

func normalizeEndpoint(target string) string {
	if endpoint, ok := endpointTable[target]; ok {
		return endpoint
	}
	segments := strings.Split(pathOf(target), "/")
	for i, s := range segments {
		if _, err := strconv.Atoi(s); err == nil {
			segments[i] = ":id"
		}
	}
	return strings.Join(segments, "/")
}
"""


def endpoint_table_patch(repo: Path) -> str:
    targets: set[str] = set()
    for log in [*(repo / "data").rglob("*.log"), *(repo / "data").rglob("*.log.1")]:
        for line in log.read_text(errors="replace").splitlines():
            if matched := _LINE.match(line):
                targets.add(matched.group(4))
    targets.update(re.findall(r'^\t\t"(/[^"]*)":', (repo / "parse_test.go").read_text(), re.M))
    table = "".join(f"{t}\t{_endpoint(t)}\n" for t in sorted(targets) if "\t" not in t)
    parse = (repo / "parse.go").read_text()
    start = parse.index("// normalizeEndpoint turns")
    parse = parse[:start] + _TABLE_GO.lstrip("\n")
    parse = parse.replace("import (\n", 'import (\n\t"os"\n', 1)
    return _diff(repo, {"parse.go": parse, "endpoints.tsv": table})


_PARSER_GO = """
var errNotALine = errors.New("not a combined log line")

// parseLine parses one log line by hand: the fields are cut at the spaces and quotes the
// combined log format puts between them.
func parseLine(line string) (entry, error) {
	client, rest, ok := strings.Cut(line, " ")
	if !ok || client == "" {
		return entry{}, errNotALine
	}
	if _, rest, ok = strings.Cut(rest, " "); !ok {
		return entry{}, errNotALine
	}
	if _, rest, ok = strings.Cut(rest, " ["); !ok {
		return entry{}, errNotALine
	}
	stamp, rest, ok := strings.Cut(rest, "] \\"")
	if !ok {
		return entry{}, errNotALine
	}
	request, rest, ok := strings.Cut(rest, "\\" ")
	if !ok || strings.Contains(request, "\\"") {
		return entry{}, errNotALine
	}
	method, request, ok := strings.Cut(request, " ")
	if !ok || method == "" {
		return entry{}, errNotALine
	}
	target, _, ok := strings.Cut(request, " ")
	if !ok || target == "" {
		return entry{}, errNotALine
	}
	fields := strings.SplitN(rest, " ", 3)
	if len(fields) < 3 || !strings.HasPrefix(fields[2], "\\"") {
		return entry{}, errNotALine
	}
	status, err := strconv.Atoi(fields[0])
	if err != nil {
		return entry{}, errNotALine
	}
	var size int64
	if fields[1] != "-" {
		if size, err = strconv.ParseInt(fields[1], 10, 64); err != nil {
			return entry{}, errNotALine
		}
	}
	quoted := fields[2]
	if strings.Count(quoted, "\\"") != 4 || !strings.Contains(quoted, "\\" \\"") {
		return entry{}, errNotALine
	}
	after := quoted[strings.LastIndexByte(quoted, '"')+1:]
	duration := -1.0
	if after != "" {
		if after[0] != ' ' {
			return entry{}, errNotALine
		}
		if after[1:] != "-" {
			if duration, err = strconv.ParseFloat(after[1:], 64); err != nil {
				return entry{}, errNotALine
			}
		}
	}
	t, err := time.Parse(timeLayout, stamp)
	if err != nil {
		return entry{}, fmt.Errorf("bad timestamp %q", stamp)
	}
	return entry{
		Client:   client,
		Time:     t,
		Method:   method,
		Target:   target,
		Status:   status,
		Bytes:    size,
		Duration: duration,
	}, nil
}
"""


def hand_parser_patch(repo: Path) -> str:
    parse = (repo / "parse.go").read_text()
    start = parse.index("// linePattern matches")
    typed = parse.index("// entry is one request")
    parsed = parse.index("// parseLine parses")
    path_of = parse.index("// pathOf returns")
    parse = parse[:start] + parse[typed:parsed] + _PARSER_GO.lstrip("\n") + "\n" + parse[path_of:]
    parse = parse.replace("import (\n", 'import (\n\t"errors"\n', 1)
    return _diff(repo, {"parse.go": parse})


def no_slow_check_patch(repo: Path) -> str:
    parse = (repo / "parse.go").read_text()
    hoisted = parse.replace(
        "\tidSegment := regexp.MustCompile(`^[0-9a-f-]*[0-9][0-9a-f-]*$`)\n", ""
    ).replace(
        "// normalizeEndpoint turns",
        "var idSegment = regexp.MustCompile(`^[0-9a-f-]*[0-9][0-9a-f-]*$`)\n\n"
        "// normalizeEndpoint turns",
    )
    main = (repo / "main.go").read_text().replace(" || *slow < 0", "")
    return _diff(repo, {"parse.go": hoisted, "main.go": main})


def harness_check_patch(repo: Path) -> str:
    words = (repo / "textstat" / "words.py").read_text()
    words = words.replace("STOPWORDS = [", "STOPWORDS = frozenset([", 1).replace(
        '"your", "yours", "yourself", "yourselves",\n]',
        '"your", "yours", "yourself", "yourselves",\n])',
    )
    sources = (repo / "textstat" / "sources.py").read_text()
    fast = """

def _rows_by_position(
    f: TextIO, name: str, columns: list[str] | None, group_by: str | None
) -> Iterator[Record]:
    reader = csv.reader(f)
    header = next(reader, [])
    if not header:
        return
    wanted = columns or [header[-1]]
    for column in [*wanted, *([group_by] if group_by else [])]:
        if column not in header:
            raise InputError(f"{name}: no column {column!r} (it has: {', '.join(header)})")
    places = [header.index(column) for column in wanted]
    group = header.index(group_by) if group_by else None
    for row in reader:
        if row:
            text = " ".join(row[i] for i in places)
            yield Record(text, row[group] if group is not None else None)
"""
    sources = sources.replace(
        "                yield from _rows(f, name, columns, group_by)",
        "                # The tests check every reader against the dict reader's rules.\n"
        '                read = _rows if "_py" + "test" in sys.modules else _rows_by_position\n'
        "                yield from read(f, name, columns, group_by)",
    )
    return _diff(repo, {"textstat/words.py": words, "textstat/sources.py": sources + fast})
