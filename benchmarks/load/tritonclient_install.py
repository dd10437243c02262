"""A tritonclient app's client CPU per request on image JSON, without and with ``install()``.

    python benchmarks/load/tritonclient_install.py [--rounds 3] [--requests 20]

Starts the embedded server (demo models, a subprocess) and, with tritonclient's HTTP client,
sends the identity model an image-sized tensor ([1, 224, 224, 3], FP32 and UINT8) as JSON
(``set_data_from_numpy(binary_data=False)``), asks for a JSON answer and reads it with
``as_numpy``, and 1,000 strings of 64 bytes as binary (BYTES framing both ways): the app's code, unchanged, once as it is and once after
``oipcodec.compat.tritonclient.install()``. Rounds alternate (stock, installed, stock, ...);
each request's CPU is ``time.thread_time()`` of the calling thread (the server runs in its own
process, waiting costs nothing), split into set_data_from_numpy, infer (request body, HTTP,
the answer's parse) and as_numpy. Prints the median per round and the ratio of the medians.
``run_tritonclient`` gives the rows to benchmarks/load/adapters.py.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import numpy as np

from oipcodec.compat import tritonclient as compat
from oipcodec.testing import background

SHAPE = [1, 224, 224, 3]
PARTS = ("set_data_from_numpy", "infer", "as_numpy")


def cases() -> dict[str, tuple[np.ndarray[Any, Any], str, bool]]:
    """Each case's tensor, datatype and whether it travels binary: the two images as JSON (FP32
    as a model's input, UINT8 as a camera's pixels), and 1,000 strings of 64 bytes as binary
    (the BYTES framing, both ways)."""
    rng = np.random.default_rng(0)
    strings = np.array([bytes(rng.integers(0, 256, 64, dtype=np.uint8)) for _ in range(1000)],
                       dtype=object).reshape(1, 1000)  # fmt: skip
    return {
        "image JSON FP32": (rng.standard_normal(SHAPE).astype(np.float32), "FP32", False),
        "image JSON UINT8": (rng.integers(0, 256, SHAPE, dtype=np.uint8), "UINT8", False),
        "BYTES binary 1,000 x 64 B": (strings, "BYTES", True),
    }


def one_request(client: Any, http: Any, array: np.ndarray[Any, Any], datatype: str,
                binary: bool = False) -> dict[str, float]:  # fmt: skip
    """One request as an app makes it; the client thread's CPU seconds per part."""
    clock = time.thread_time
    start = clock()
    tensor = http.InferInput("INPUT0", list(array.shape), datatype)
    tensor.set_data_from_numpy(array, binary_data=binary)
    encoded = clock()
    output = http.InferRequestedOutput("INPUT0", binary_data=binary)
    result = client.infer("identity", [tensor], outputs=[output])
    answered = clock()
    got = result.as_numpy("INPUT0")
    done = clock()
    if got.shape != array.shape or got.dtype != array.dtype:
        raise AssertionError(f"unexpected answer {got.dtype} {got.shape}")
    return {"set_data_from_numpy": encoded - start, "infer": answered - encoded,
            "as_numpy": done - answered}  # fmt: skip


def run_tritonclient(rounds: int = 3, requests: int = 20) -> list[dict[str, Any]]:
    """Alternating rounds, stock then installed (then the other order), on each image; one row
    per (case, mode, round): the median client CPU milliseconds per request, total and
    per part."""
    import tritonclient.http as http

    rows: list[dict[str, Any]] = []
    with background() as server:
        client = http.InferenceServerClient(server.http_address, network_timeout=120)
        try:
            for case, (array, datatype, binary) in cases().items():
                for round_ in range(rounds):
                    order = (False, True) if round_ % 2 == 0 else (True, False)
                    for on in order:
                        if on:
                            compat.install()
                        try:
                            one_request(client, http, array, datatype, binary)  # warm-up
                            samples = [
                                one_request(client, http, array, datatype, binary)
                                for _ in range(requests)
                            ]
                        finally:
                            compat.uninstall()
                        row: dict[str, Any] = {"case": case, "round": round_ + 1,
                                               "mode": "install()" if on else "stock"}  # fmt: skip
                        for part in PARTS:
                            row[part] = 1e3 * statistics.median(s[part] for s in samples)
                        row["total"] = 1e3 * statistics.median(sum(s.values()) for s in samples)
                        rows.append(row)
        finally:
            client.close()
    return rows


def summary(rows: list[dict[str, Any]]) -> dict[str, tuple[float, float, float]]:
    """Per case: (stock ms, installed ms, stock / installed), medians over the rounds."""
    out = {}
    for case in dict.fromkeys(r["case"] for r in rows):
        stock = statistics.median(
            r["total"] for r in rows if r["case"] == case and r["mode"] == "stock"
        )
        ours = statistics.median(
            r["total"] for r in rows if r["case"] == case and r["mode"] != "stock"
        )
        out[case] = (stock, ours, stock / ours)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--requests", type=int, default=20)
    args = parser.parse_args()
    rows = run_tritonclient(args.rounds, args.requests)
    print("| case | round | mode | set_data_from_numpy | infer | as_numpy | total ms |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['case']} | {r['round']} | {r['mode']} | {r['set_data_from_numpy']:.2f} "
              f"| {r['infer']:.2f} | {r['as_numpy']:.2f} | {r['total']:.2f} |")  # fmt: skip
    for case, (stock, ours, ratio) in summary(rows).items():
        print(f"{case}: stock {stock:.2f} ms, install() {ours:.2f} ms: {ratio:.1f}x less CPU")


if __name__ == "__main__":
    main()
