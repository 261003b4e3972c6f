def solve(xs: list[int], m: int) -> int:
    # The trap of the design note: counts values seen exactly once, not distinct values.
    counts: dict[int, int] = {}
    for x in xs:
        counts[x % m] = counts.get(x % m, 0) + 1
    return sum(1 for n in counts.values() if n == 1)
