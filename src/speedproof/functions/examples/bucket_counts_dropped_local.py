def solve(xs: list[int], queries: list[int]) -> list[int]:
    # The "dropped local" trap: the rewrite lost `bucket_size = 16` but still uses it.
    counts: dict[int, int] = {}
    for x in xs:
        b = x // bucket_size  # type: ignore[name-defined]  # the trap itself
        counts[b] = counts.get(b, 0) + 1
    return [counts.get(q, 0) for q in queries]
