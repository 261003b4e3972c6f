"""A one-page PDF encrypted with RC4, as the standard security handler writes it (PDF 1.7, 7.6.3).

The page is a line chart drawn with path operators (a random walk from a fixed seed), the kind
of dense vector page a plotting library exports; its content stream is RC4-encrypted with a
40-bit key (revision 2), an empty user password and an owner password, so any reader opens it
and must decrypt every stream. `benchmarks/outside_targets.py` writes two of them as pdfminer's
workload.
"""

from __future__ import annotations

import hashlib
import random

# The password padding of the standard security handler (Algorithm 2, step a).
PAD = bytes.fromhex("28BF4E5E4E758A4164004E56FFFA01082E2E00B6D0683E802F0CA9FE6453697A")
# Print and copy allowed, nothing else (bits 3 and 5, the reserved high bits set).
PERMISSIONS = -44
KEY_BYTES = 5


def rc4(key: bytes, data: bytes) -> bytes:
    state = list(range(256))
    j = 0
    for i in range(256):
        j = (j + state[i] + key[i % len(key)]) % 256
        state[i], state[j] = state[j], state[i]
    out = bytearray(len(data))
    i = j = 0
    for n, byte in enumerate(data):
        i = (i + 1) % 256
        j = (j + state[i]) % 256
        state[i], state[j] = state[j], state[i]
        out[n] = byte ^ state[(state[i] + state[j]) % 256]
    return bytes(out)


def _padded(password: bytes) -> bytes:
    return (password + PAD)[:32]


def _keys(owner: bytes, file_id: bytes) -> tuple[bytes, bytes, bytes]:
    """(file key, /O, /U) for an empty user password (Algorithms 2, 3 and 4)."""
    o_value = rc4(hashlib.md5(_padded(owner)).digest()[:KEY_BYTES], _padded(b""))
    p_bytes = PERMISSIONS.to_bytes(4, "little", signed=True)
    key = hashlib.md5(_padded(b"") + o_value + p_bytes + file_id).digest()[:KEY_BYTES]
    return key, o_value, rc4(key, PAD)


def chart(seed: int, points: int) -> bytes:
    """Path operators for four series of `points` points each, on a US Letter page."""
    rng = random.Random(seed)
    lines = [b"1 0 0 1 36 36 cm 0.4 w"]
    for series in range(4):
        lines.append(f"{series / 4:.2f} 0.2 0.6 RG".encode())
        y = 360.0
        for n in range(points):
            y = min(700.0, max(20.0, y + rng.uniform(-6.0, 6.0)))
            x = 540.0 * n / points
            lines.append(f"{x:.3f} {y:.3f} {'m' if n == 0 else 'l'}".encode())
        lines.append(b"S")
    return b"\n".join(lines) + b"\n"


def encrypted_pdf(seed: int, points: int) -> bytes:
    file_id = hashlib.md5(f"speedproof chart {seed}".encode()).digest()
    key, o_value, u_value = _keys(b"owner", file_id)
    content = chart(seed, points)
    # The key of object 4 generation 0 (Algorithm 1): the file key, the number and generation.
    object_key = hashlib.md5(key + (4).to_bytes(3, "little") + (0).to_bytes(2, "little"))
    stream = rc4(object_key.digest()[: KEY_BYTES + 5], content)
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>",
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Filter /Standard /V 1 /R 2 /O <%s> /U <%s> /P %d >>"
        % (o_value.hex().encode(), u_value.hex().encode(), PERMISSIONS),
    ]
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    hex_id = file_id.hex().encode()
    out += b"trailer\n<< /Size %d /Root 1 0 R /Encrypt 5 0 R /ID [<%s> <%s>] >>\n" % (
        len(objects) + 1,
        hex_id,
        hex_id,
    )
    out += b"startxref\n%d\n%%%%EOF\n" % xref
    return bytes(out)
