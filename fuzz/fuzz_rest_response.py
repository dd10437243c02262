"""Fuzz oipcodec.rest.decode_response: JSON bodies, with and without the binary extension.

Input layout: byte 0 holds flags: bit 0, a header length follows (4 bytes, little-endian,
taken modulo the body length + 2, so it is mostly inside the body); bit 1, the body is gzip
(it is compressed here, so the inflater and what it gives are both exercised); bits 2-3 pick
tight limits. The rest is the body.
"""

from __future__ import annotations

from _harness import rest_case


def one_input(data: bytes) -> None:
    rest_case(data, "response")


if __name__ == "__main__":
    from _harness import main

    main(one_input)
