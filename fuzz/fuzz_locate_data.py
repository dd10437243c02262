"""Fuzz locate_data: finding the data arrays of an OIP JSON body. The input is the body.
When it succeeds, every span must be a non-empty range inside the body."""

from __future__ import annotations

from _harness import Mismatch, compare, main


def one_input(data: bytes) -> None:
    result = compare(lambda k: k.locate_data(data), data)
    if result[0] == "ok":
        for section, index, start, end in result[1]:
            if not (section in (0, 1) and index >= 0 and 0 <= start < end <= len(data)):
                raise Mismatch(f"span {(section, index, start, end)} outside {data!r}")


if __name__ == "__main__":
    main(one_input)
