"""What every fuzz harness shares: the twin comparison and the runner.

A harness module defines ``one_input(data: bytes) -> None`` and calls :func:`main`. The check
is the same everywhere: decode ``data`` with the native kernels and with the pure twins; each
must either return a value or raise an :class:`oipcodec.OIPError` subclass (anything else is
a crash), and both must give the same value or the same error class and message.

:func:`main` runs the harness under atheris (coverage-guided) when it is installed, and as a
plain loop otherwise: the seed corpus first, then random mutations of it (byte flips, cuts,
splices, inserted bytes), so the harnesses run anywhere. Options, in libFuzzer's spelling:
``-max_total_time=S``, ``-runs=N``, ``-seed=N``; ``--plain`` forces the plain loop; the
remaining arguments are corpus directories or files.
"""

# ruff: noqa: E402  (oipcodec is imported after atheris may have instrumented it)
from __future__ import annotations

import contextlib
import dataclasses
import gzip
import os
import random
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "corpus"

# Under atheris, oipcodec's Python layers are instrumented for coverage when a harness is the
# program (not when pytest imports the harnesses to replay the corpus). The native kernels are
# not instrumented: atheris then sees their behaviour only through the Python around them.
with contextlib.suppress(ImportError):
    import atheris

    if "oipcodec" not in sys.modules and Path(sys.argv[0]).name.startswith("fuzz_"):
        with atheris.instrument_imports(include=["oipcodec"]):
            import oipcodec
            import oipcodec.pb
            import oipcodec.rest

import oipcodec
import oipcodec.pb
import oipcodec.rest
from oipcodec import kernels as facade
from oipcodec.errors import OIPError

NATIVE = facade.load("native")
PURE = facade.load("pure")
TWINS = (("native", NATIVE), ("pure", PURE))


class Mismatch(AssertionError):
    """Native and pure disagree, or something other than an OIPError escaped."""


def normalise(value: Any) -> Any:
    """A comparable form of a decoder's result: arrays by dtype, shape and bytes (so NaN
    payloads and -0.0 count), object arrays by their elements, dataclasses field by field."""
    if isinstance(value, np.ndarray):
        if value.dtype == object:
            return ("object", value.shape, value.tolist())
        return (value.dtype.str, value.shape, np.ascontiguousarray(value).tobytes())
    if isinstance(value, memoryview):
        return ("memoryview", value.tobytes())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = dataclasses.fields(value)
        return (type(value).__name__, *(normalise(getattr(value, f.name)) for f in fields))
    if isinstance(value, (list, tuple)):
        return tuple(normalise(v) for v in value)
    if isinstance(value, dict):
        return repr(value)  # NaN-safe: float('nan') != float('nan')
    if isinstance(value, float):
        return repr(value)
    return value


def outcome(call: Callable[[], Any]) -> tuple[Any, ...]:
    """``("ok", normalised result)`` or ``(error class, message)``; other exceptions escape."""
    try:
        return ("ok", normalise(call()))
    except OIPError as exc:
        return (type(exc).__name__, str(exc))


def compare(call: Callable[[SimpleNamespace], Any], data: bytes) -> tuple[Any, ...]:
    """Run ``call(kernels)`` on native and pure and require the same outcome."""
    results = []
    for name, kernels in TWINS:
        try:
            results.append(outcome(lambda kernels=kernels: call(kernels)))
        except Exception as exc:
            raise Mismatch(
                f"{name}: {type(exc).__name__} escaped (not an OIPError): {exc!r}\ninput: {data!r}"
            ) from exc
    if results[0] != results[1]:
        raise Mismatch(
            f"native and pure disagree\n native: {results[0]!r}\n pure:   {results[1]!r}\n"
            f"input: {data!r}"
        )
    return results[0]


@contextlib.contextmanager
def facade_as(kernels: SimpleNamespace) -> Iterator[None]:
    """Point the kernel facade (what oipcodec.rest and oipcodec.raw call) at one
    implementation for the duration; the harnesses are single-threaded."""
    names = [n for n in vars(PURE) if n != "IMPLEMENTATION"]
    saved = {n: getattr(facade, n) for n in names}
    try:
        for n in names:
            setattr(facade, n, getattr(kernels, n))
        yield
    finally:
        for n, v in saved.items():
            setattr(facade, n, v)


def compare_facade(call: Callable[[], Any], data: bytes) -> tuple[Any, ...]:
    """:func:`compare` for code that goes through the facade (the REST codec)."""

    def through(kernels: SimpleNamespace) -> Any:
        with facade_as(kernels):
            return call()

    return compare(through, data)


# --------------------------------------------------------------------------- input layout


class Reader:
    """Carves options out of the front of a fuzz input; the rest is the body."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def byte(self) -> int:
        if self.pos >= len(self.data):
            return 0
        self.pos += 1
        return self.data[self.pos - 1]

    def u32(self) -> int:
        return sum(self.byte() << (8 * i) for i in range(4))

    def rest(self) -> bytes:
        return self.data[self.pos :]


def count_option(reader: Reader) -> int | None:
    """One byte: 0 is ``None``, 255 a huge count, else the count plus one."""
    b = reader.byte()
    if b == 0:
        return None
    if b == 255:
        return 2**40
    return b - 1


#: Limits a harness can pick: the defaults, and tight ones that small inputs can exceed.
LIMITS = (
    oipcodec.Limits(),
    oipcodec.Limits(
        max_body_bytes=4096,
        max_decompressed_bytes=4096,
        max_tensor_elements=64,
        max_request_elements=100,
        max_depth=3,
        max_bytes_element=8,
        max_tensors=2,
    ),
    oipcodec.Limits(max_tensor_elements=0, max_request_elements=0, max_tensors=0),
    oipcodec.Limits(max_bytes_element=0, max_depth=0, max_decompressed_bytes=0),
)


def rest_case(data: bytes, kind: str) -> tuple[Any, ...]:
    """One REST body, decoded as a ``kind`` ("request" or "response"); layout in
    fuzz_rest_request.py."""
    reader = Reader(data)
    flags = reader.byte()
    header_length = None
    if flags & 1:
        header_length = reader.u32() % (len(data) + 2)
    limits = LIMITS[(flags >> 2) & 3]
    body = reader.rest()
    encoding = None
    if flags & 2:
        body, encoding = gzip.compress(body, mtime=0), "gzip"
    elif flags & 16:
        encoding = "deflate"  # the body as it is: mostly not a deflate stream at all
    decode = oipcodec.rest.decode_request if kind == "request" else oipcodec.rest.decode_response
    return compare_facade(lambda: decode(body, header_length, encoding, limits=limits), data)


def pb_case(data: bytes, kind: str) -> tuple[Any, ...]:
    """One protobuf message, decoded as a ``kind``; byte 0 picks the limits."""
    reader = Reader(data)
    limits = LIMITS[reader.byte() & 3]
    body = reader.rest()
    decode = oipcodec.pb.decode_request if kind == "request" else oipcodec.pb.decode_response
    return compare(lambda k: decode(body, limits=limits, kernels=k), data)


# --------------------------------------------------------------------------- runner


def _mutate(rng: random.Random, seeds: list[bytes]) -> bytes:
    data = bytearray(rng.choice(seeds) if seeds else b"")
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(6)
        pos = rng.randint(0, len(data))
        if op == 0 and data:  # flip a bit
            i = rng.randrange(len(data))
            data[i] ^= 1 << rng.randrange(8)
        elif op == 1:  # cut
            data = data[:pos]
        elif op == 2:  # insert random bytes
            data[pos:pos] = rng.randbytes(rng.randint(1, 8))
        elif op == 3 and data:  # interesting byte
            data[rng.randrange(len(data))] = rng.choice(b'\x00\x01\x7f\x80\xff[]{}",:-.0e9\\')
        elif op == 4 and seeds:  # splice another seed
            other = rng.choice(seeds)
            cut = rng.randint(0, len(other))
            data = data[:pos] + other[cut:]
        elif op == 5 and data:  # duplicate a slice
            a = rng.randrange(len(data))
            b = rng.randint(a, min(len(data), a + 64))
            data[pos:pos] = data[a:b]
    return bytes(data)


def load_corpus(paths: list[str]) -> list[bytes]:
    seeds = []
    for path in map(Path, paths):
        files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
        seeds += [f.read_bytes() for f in files]
    return seeds


def plain_loop(
    one_input: Callable[[bytes], None],
    argv: list[str],
    mutate: Callable[[random.Random, list[bytes]], bytes] = _mutate,
) -> int:
    """Run the corpus, then random mutations (``mutate``), until the time or run budget is
    used."""
    options = {a.split("=")[0]: a.split("=", 1)[1] for a in argv if a.startswith("-") and "=" in a}
    paths = [a for a in argv if not a.startswith("-")]
    budget = float(options.get("-max_total_time", 30))
    runs = int(options.get("-runs", -1))
    rng = random.Random(int(options.get("-seed", time.time_ns() % 2**32)))
    seeds = load_corpus(paths)
    start = time.monotonic()
    done = 0
    for data in seeds:
        one_input(data)
        done += 1
    while (runs < 0 or done < runs) and time.monotonic() - start < budget:
        data = mutate(rng, seeds)
        try:
            one_input(data)
        except BaseException:
            crash = HERE / f"crash-{os.getpid()}-{done}"
            crash.write_bytes(data)
            print(f"crash input written to {crash}", file=sys.stderr)
            raise
        done += 1
    elapsed = time.monotonic() - start
    print(f"plain loop: {done} executions in {elapsed:.1f} s ({len(seeds)} seeds), no failures")
    return done


def main(
    one_input: Callable[[bytes], None],
    mutate: Callable[[random.Random, list[bytes]], bytes] = _mutate,
) -> None:
    """Fuzz ``one_input``: atheris when installed, else :func:`plain_loop` with ``mutate``."""
    argv = sys.argv[1:]
    if "atheris" in sys.modules and "--plain" not in argv:
        atheris.Setup([sys.argv[0], *argv], one_input)
        atheris.Fuzz()
    else:
        plain_loop(one_input, [a for a in argv if a != "--plain"], mutate)
