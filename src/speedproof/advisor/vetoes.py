"""Where code knows more than the advisor, it overrules a flag and says why.

- unbuffered_io needs a read or write that can reach a real file or stream. A flag on a function
  with no I/O at all, or whose every read and write goes to memory (StringIO, bytes.Buffer,
  strings.Builder) or to an already-buffered stream (bufio, Python's default `open()`), is
  vetoed. A destination the function alone does not show (an `io.Writer` parameter) does not
  veto: there the code knows no more than the model.
- preallocation needs a collection that grows inside a loop (append, extend, add, a store
  into a map or list); without one there is nothing to preallocate.

A veto applies only to a flag: an answer that did not clear the gates needs no overruling.
"""

from __future__ import annotations

from collections.abc import Callable

from speedproof.advisor.gofacts import GoFacts, read_go
from speedproof.advisor.pyfacts import PyFacts, read_python
from speedproof.advisor.subject import Subject

Facts = PyFacts | GoFacts


def read_facts(subject: Subject) -> Facts:
    return read_python(subject) if subject.language == "python" else read_go(subject)


def _unbuffered_io(facts: Facts) -> str | None:
    sites = facts.io_sites()
    if not sites:
        return "the function reads and writes no file or stream"
    if any(site.destination in ("real", "unknown") for site in sites):
        return None
    shown = "; ".join(f"{site.call[:40]}: {site.why}" for site in sites[:3])
    more = f" (and {len(sites) - 3} more)" if len(sites) > 3 else ""
    return f"every read and write goes to memory or an already-buffered stream: {shown}{more}"


def _preallocation(facts: Facts) -> str | None:
    if facts.growths():
        return None
    return "no collection grows inside a loop"


VETOES: dict[str, Callable[[Facts], str | None]] = {
    "unbuffered_io": _unbuffered_io,
    "preallocation": _preallocation,
}


def vetoes_for(subject: Subject) -> dict[str, str]:
    """cause -> the reason code overrules a flag of it, for every veto that applies."""
    facts = read_facts(subject)
    found = {}
    for cause, rule in VETOES.items():
        reason = rule(facts)
        if reason is not None:
            found[cause] = reason
    return found
