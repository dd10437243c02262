"""Fuzz deserialize_bytes: the BYTES length-prefix framing.

Input layout: byte 0 is the count (0: None, 255: 2**40, else count + 1); the rest is the
buffer. The result must also agree with bytes_offsets on the same buffer.
"""

from __future__ import annotations

import numpy as np
from _harness import Mismatch, Reader, compare, count_option, main


def one_input(data: bytes) -> None:
    reader = Reader(data)
    count = count_option(reader)
    buffer = reader.rest()
    result = compare(lambda k: k.deserialize_bytes(buffer, count), data)
    offsets = compare(lambda k: k.bytes_offsets(buffer, count), data)
    if result[0] == "ok":
        elements = result[1][2]
        starts, lengths = (np.frombuffer(part[2], "<i8").tolist() for part in offsets[1])
        rebuilt = [buffer[s : s + n] for s, n in zip(starts, lengths, strict=True)]
        if rebuilt != elements:
            raise Mismatch(f"bytes_offsets and deserialize_bytes disagree on {data!r}")
    elif result != offsets:
        raise Mismatch(f"different errors: {result!r} vs {offsets!r} on {data!r}")


if __name__ == "__main__":
    main(one_input)
