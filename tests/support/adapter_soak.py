"""A bounded soak of an adapter's REST route (tests/compat): valid requests mixed with bad ones,
sent at once from 4 threads in a fixed shuffled order, and what each was answered."""

from __future__ import annotations

import gzip
import random
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

_T = TypeVar("_T")

#: 64 MB of zeros in about 64 KB: inflates to the default inflate limit, and is not JSON.
GZIP_BOMB = gzip.compress(b"\0" * (64 << 20), 9)

Request = tuple[bytes, dict[str, str]]


def soak(
    send: Callable[[bytes, dict[str, str]], _T],
    valid: list[Request],
    bad: list[Request],
    *,
    valid_count: int = 200,
    bad_count: int = 40,
) -> list[tuple[bool, _T]]:
    """``send(body, headers)`` for ``valid_count`` valid and ``bad_count`` bad requests (each
    list cycled), shuffled with a fixed seed, from 4 threads: ``(was_valid, answer)`` each."""
    plan = [(True, valid[i % len(valid)]) for i in range(valid_count)]
    plan += [(False, bad[i % len(bad)]) for i in range(bad_count)]
    random.Random(7).shuffle(plan)

    def one(item: tuple[bool, Request]) -> tuple[bool, _T]:
        good, (body, headers) = item
        return good, send(body, headers)

    with ThreadPoolExecutor(4) as pool:
        return list(pool.map(one, plan))
