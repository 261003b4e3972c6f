def solve(xs: list[int], queries: list[int]) -> list[int]:
    bucket_size = 16
    counts: dict[int, int] = {}
    for x in xs:
        b = x // bucket_size
        counts[b] = counts.get(b, 0) + 1
    return [counts.get(q, 0) for q in queries]
