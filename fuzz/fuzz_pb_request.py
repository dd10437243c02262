"""Fuzz oipcodec.pb.decode_request: serialized ModelInferRequest bytes through the pbwire
reader. Input layout: byte 0 picks tight limits (bits 0-1); the rest is the message."""

from __future__ import annotations

from _harness import pb_case


def one_input(data: bytes) -> None:
    pb_case(data, "request")


if __name__ == "__main__":
    from _harness import main

    main(one_input)
