def solve(values: list[int], modulus: int) -> int:
    found: list[int] = []
    for value in values:
        residue = value % modulus
        if residue not in found:
            found.append(residue)
    return len(found)
