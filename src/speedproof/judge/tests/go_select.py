"""Which tests a Go re-run selects, with speedproof's canary in every selection (docs/adr/0063).

A re-run runs the same test binaries with the full run's `-test.*` flags and one more,
`-test.run`, that narrows the selection to the suspect tests. It carries the canary
(`go_canary`) like the full run: the canary's name is one more alternative at the top level of
every pattern, so a binary that forges its report on a re-run is caught as it is on a full run.
"""

from __future__ import annotations

import re
from collections.abc import Sequence


def quote_meta(text: str) -> str:
    """Go's regexp.QuoteMeta: `-run` takes regular expressions, test names are literal."""
    return re.sub(r"([\\.+*?()|\[\]{}^$])", r"\\\1", text)


def _named(packages: Sequence[str], only: Sequence[str]) -> list[tuple[str, list[str]]]:
    """(package, name parts) of each id in `only`; ids of unknown packages and synthetic ids,
    which no `-run` can select, are left out."""
    ordered = sorted(packages, key=len, reverse=True)
    named = []
    for test_id in only:
        package = next((p for p in ordered if test_id.startswith(p + "/")), None)
        name = test_id[len(package) + 1 :] if package else ""
        if package and not name.startswith("["):
            named.append((package, name.split("/")))
    return named


def rerun_plan(
    packages: Sequence[str], only: Sequence[str], canary: str | None
) -> list[tuple[str, list[str]]]:
    """`(-run pattern, packages)` pairs re-running exactly the ids in `only`, each pattern
    also selecting the test named `canary`.

    Top-level tests share one pattern (`^(A|B|Canary)$` over their packages; a same-named test
    in another listed package may run too and is simply not asked about). A subtest gets its
    own, anchored level by level (`^(TestX|Canary)$/^case$`), since `-run` applies each level's
    pattern to every test at that level; the canary has no subtests, so it runs in full.
    """
    extra = [] if canary is None else [canary]
    named = _named(packages, only)
    top: dict[str, list[str]] = {}
    for package, parts in named:
        if len(parts) == 1:
            top.setdefault(parts[0], []).append(package)
    plan = []
    for package, parts in named:
        # A subtest whose top-level test re-runs anyway runs with it.
        if len(parts) > 1 and package not in top.get(parts[0], []):
            first = "|".join(quote_meta(n) for n in [parts[0], *extra])
            rest = [f"^{quote_meta(p)}$" for p in parts[1:]]
            plan.append(("/".join([f"^({first})$", *rest]), [package]))
    if top:
        names = "|".join(quote_meta(n) for n in [*sorted(top), *extra])
        listed = sorted({p for found in top.values() for p in found})
        plan.insert(0, (f"^({names})$", listed))
    return plan
