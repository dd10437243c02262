"""Fuzz json_to_array: the text of a JSON data array into a typed array of a shape.

Input layout: byte 0 picks the datatype (one past the table is an unknown name), byte 1 the
number of dimensions (low 2 bits) and a small max_depth (bit 2), then one byte per dimension
(254: 2**40, 255: 2**31-1), then the text.
"""

from __future__ import annotations

from _harness import Reader, compare, main

from oipcodec.datatypes import DATATYPES

NAMES = [*DATATYPES, "FP8"]


def layout(data: bytes) -> tuple[str, list[int], int, bytes]:
    reader = Reader(data)
    datatype = NAMES[reader.byte() % len(NAMES)]
    flags = reader.byte()
    dims = []
    for _ in range(flags & 3):
        d = reader.byte()
        dims.append({254: 2**40, 255: 2**31 - 1}.get(d, d))
    max_depth = 2 if flags & 4 else 100
    return datatype, dims, max_depth, reader.rest()


def one_input(data: bytes) -> None:
    datatype, shape, max_depth, text = layout(data)
    compare(lambda k: k.json_to_array(text, datatype, shape, max_depth=max_depth), data)


if __name__ == "__main__":
    main(one_input)
