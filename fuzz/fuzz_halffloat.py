"""Fuzz the half-float unpackers: unpack_fp16, unpack_bf16 and view_bf16.

Input layout: byte 0 picks the kernel (mod 3), byte 1 the count (0: None, 255: 2**40, else
count + 1), byte 2 an offset (0-1) making the buffer unaligned; the rest is the buffer.
"""

from __future__ import annotations

from _harness import Reader, compare, count_option, main

KERNELS = ("unpack_fp16", "unpack_bf16", "view_bf16")


def one_input(data: bytes) -> None:
    reader = Reader(data)
    name = KERNELS[reader.byte() % 3]
    count = count_option(reader)
    shift = reader.byte() & 1
    buffer = memoryview(b"\x00" * shift + reader.rest())[shift:]
    compare(lambda k: getattr(k, name)(buffer, count), data)


if __name__ == "__main__":
    main(one_input)
