def solve(xs: list[int], m: int) -> int:
    return len({x % m for x in xs})
