"""py-join-bytes on the shapes real projects grow bytes in: pdfminer's RC4 `Arcfour.process`
(`r = b""`, one `r += bytes((c ^ k,))` a byte) and hexdump's `restore` (`result = bytes() if
PY3K else ''`, one line's bytes a step). Bytes are grown in place in a bytearray (a start
that may be str, in a list joined once), and the program, run as a real subprocess, prints
exactly what it printed before; each near miss is declined with its reason."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from speedproof.agents.heuristic import rules
from support.heuristic import declined, python_same_output
from support.heuristic_python import proposal, rewritten, run, subject_of

RULE = "py-join-bytes"

ARCFOUR = textwrap.dedent(
    """\
    class Arcfour:
        def __init__(self, key):
            s = list(range(256))
            j = 0
            klen = len(key)
            for i in range(256):
                j = (j + s[i] + key[i % klen]) % 256
                (s[i], s[j]) = (s[j], s[i])
            self.s = s
            (self.i, self.j) = (0, 0)

        def process(self, data):
            (i, j) = (self.i, self.j)
            s = self.s
            r = b""
            for c in iter(data):
                i = (i + 1) % 256
                j = (j + s[i]) % 256
                (s[i], s[j]) = (s[j], s[i])
                k = s[(s[i] + s[j]) % 256]
                r += bytes((c ^ k,))
            (self.i, self.j) = (i, j)
            return r


    cipher = Arcfour(b"Key")
    print(cipher.process(b"Plaintext").hex(), cipher.process(b"").hex())
    print(cipher.process(bytearray(b"more")).hex(), type(cipher.process(b"x")).__name__)
    """
)

RESTORE = textwrap.dedent(
    """\
    import sys

    PY3K = sys.version_info >= (3, 0)


    def dehex(text):
        return bytes.fromhex(text) if PY3K else text.decode("hex")


    def restore(dump):
        result = bytes() if PY3K else ''
        if type(dump) != str:
            raise TypeError('Invalid data for restore')
        text = dump.strip()
        for line in text.split('\\n'):
            addrend = line.find(':')
            if 0 < addrend < 32:
                line = line[addrend+1:]
            result += dehex(line.strip()[:47])
        return result


    print(restore("00000000: 5B 68 65 78  64 75 6D 70\\n00000010: 5D 0A\\n"))
    """
)

STREAM = textwrap.dedent(
    """\
    import io


    def read_all(handle):
        data = b""
        while True:
            chunk = handle.read(3)
            if not chunk:
                break
            data += chunk
        return data


    print(read_all(io.BytesIO(b"one two three")), read_all(io.BytesIO(b"")))
    """
)


def test_bytes_grown_a_byte_at_a_time_are_joined_once_and_print_the_same(tmp_path: Path) -> None:
    found = proposal(ARCFOUR, "Arcfour.process", RULE)
    assert found is not None
    new = python_same_output(tmp_path, ARCFOUR, found)
    assert "r_buffer += bytes((c ^ k,))" in new and "r = r + bytes(r_buffer)" in new
    assert 'r = b""\n        r_buffer = bytearray()\n        for c in iter(data):' in new


# The cipher over 200,000 bytes with the peak of Python's allocations printed: grown in place
# the peak is about twice the output (the old bytes and the new while one is copied); a list
# of parts would hold an object per byte, over 40 bytes each.
ARCFOUR_PEAK = ARCFOUR.split("\n\ncipher")[0] + textwrap.dedent(
    """

    import tracemalloc

    tracemalloc.start()
    out = Arcfour(b"Key").process(bytes(200_000))
    print(len(out), tracemalloc.get_traced_memory()[1])
    """
)


def test_bytes_grown_a_byte_at_a_time_take_no_more_than_twice_the_peak_memory(
    tmp_path: Path,
) -> None:
    found = proposal(ARCFOUR_PEAK, "Arcfour.process", RULE)
    assert found is not None
    new = rewritten(tmp_path, ARCFOUR_PEAK, found)
    before, after = run(tmp_path, ARCFOUR_PEAK, "before"), run(tmp_path, new, "after")
    (length, peak_before), (length_after, peak_after) = (
        map(int, done.stdout.split()) for done in (before, after)
    )
    assert length == length_after == 200_000
    assert peak_after < 2 * peak_before, (peak_before, peak_after)


def test_a_start_that_is_bytes_or_str_by_python_version_keeps_its_type(tmp_path: Path) -> None:
    found = proposal(RESTORE, "restore", RULE)
    assert found is not None
    new = python_same_output(tmp_path, RESTORE, found)
    assert "result = bytes() if PY3K else ''" in new and "result = result.join(result_parts)" in new
    as_str = RESTORE.replace("PY3K = sys.version_info >= (3, 0)", "PY3K = False")
    as_str = as_str.replace('text.decode("hex")', "text")
    found_str = proposal(as_str, "restore", RULE)
    assert found_str is not None
    (tmp_path / "str").mkdir()
    assert "result_parts.append(" in python_same_output(tmp_path / "str", as_str, found_str)


def test_bytes_read_in_chunks_by_a_while_loop_are_joined_once(tmp_path: Path) -> None:
    found = proposal(STREAM, "read_all", RULE)
    assert found is not None
    new = python_same_output(tmp_path, STREAM, found)
    assert "data_buffer += chunk" in new and "data = data + bytes(data_buffer)" in new


def test_the_rule_is_tried_before_the_str_rules_and_named_in_the_survey() -> None:
    ids = rules.rule_ids("python")
    assert ids.index(RULE) < ids.index("py-join-parts")
    assert RULE in {f.rule for f in rules.findings(subject_of(STREAM, "read_all"))}


@pytest.mark.parametrize(
    ("old", "new", "reason"),
    [
        ('data = b""', 'data = b"head"', "`data` starts from bytes that are not empty"),
        (
            '    data = b""\n',
            '    data = b""\n    print(len(data))\n',
            "`data` is read between its start and the loop that grows it",
        ),
        (
            "if not chunk:",
            "if not chunk or len(data) > 99:",
            "`data` is read inside the loop, not only grown by `data += ...`",
        ),
        ("data += chunk", 'data += "text"', '`data += "text"` adds a value that is not of'),
        ("data += chunk", "data += 3", "`data += 3` adds a value that is not of the start's"),
        (
            '    data = b""\n',
            '    global data\n    data = b""\n',
            "`data` is declared global or nonlocal, so others may read it",
        ),
        (
            '    data = b""\n',
            '    peek = lambda: len(data)\n    data = b""\n',
            "a nested function or class names `data`, and could read it during the loop",
        ),
    ],
)
def test_each_near_miss_is_declined_with_its_reason(old: str, new: str, reason: str) -> None:
    text = STREAM.replace(old, new)
    assert text != STREAM
    assert reason in declined(subject_of(text, "read_all"), RULE)


def test_a_loop_inside_a_try_is_declined_as_a_handler_would_see_the_start() -> None:
    start, rest = STREAM.split('    data = b""\n', 1)
    loop, after = rest.split("    return data\n", 1)
    guarded = textwrap.indent('    data = b""\n' + loop, "    ")
    handler = "    except OSError:\n        return data\n"
    text = f"{start}    try:\n{guarded}{handler}    return data\n{after}"
    reason = declined(subject_of(text, "read_all"), RULE)
    assert "the loop sits in a try: a handler would find the start, not the bytes so far" in reason


def test_a_str_start_is_left_to_the_str_rule() -> None:
    text = STREAM.replace('data = b""', 'data = ""').replace("io.BytesIO(b", "io.StringIO(")
    assert proposal(text, "read_all", RULE) is None
    assert proposal(text, "read_all", "py-join-parts") is not None
