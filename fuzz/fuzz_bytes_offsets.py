"""Fuzz bytes_offsets (zero-copy BYTES framing scan). Layout as fuzz_deserialize_bytes, plus
byte 1: an offset (0-3) at which the buffer starts inside a larger one, so the scan also
runs on unaligned memoryviews."""

from __future__ import annotations

from _harness import Reader, compare, count_option, main


def one_input(data: bytes) -> None:
    reader = Reader(data)
    count = count_option(reader)
    shift = reader.byte() & 3
    buffer = memoryview(b"\xff" * shift + reader.rest() + b"\xee")[shift:-1]
    compare(lambda k: k.bytes_offsets(buffer, count), data)


if __name__ == "__main__":
    main(one_input)
