"""The server soaked with reloads and shared memory (issue 44): for a few seconds on
127.0.0.1, configuration overrides reload a batching model (its ``max_batch_size`` between 8
and 16) under batching load, while shared-memory requests keep more bytes in flight than
the budget holds and a prober asks for health. Checks:

- a batched request is answered 200 with the right rows, or refused 400 (more rows than its
  model or queue takes) or 503 (it met the reload); never a 5xx otherwise, never a hang;
- every reload is answered 200;
- a shared-memory request is answered 200 with its bytes, or 503 naming the region, the
  budget and the bytes in flight (no byte offset: the request is valid, it fits later);
- health answers within a second throughout (the event loop never freezes);
- at the end the copies are all given back: one request may read the budget's worth.
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import pytest

from oipcodec.testing import background

pytest.importorskip("uvicorn", reason="the server extra is not installed")

SECONDS = 6.0  # the soak's length; the whole test takes about 10 s
BUDGET = 8 << 20
REGION = 3 << 20  # two requests' copies fit in the budget, three do not


def _post(url: str, document: Any) -> tuple[int, Any]:
    request = urllib.request.Request(
        url, json.dumps(document).encode(), {"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=20) as answer:
            return answer.status, json.loads(answer.read() or b"{}")
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"{}")


def _in_region(size: int, name: str = "X") -> dict[str, Any]:
    params = {"shared_memory_region": "soak", "shared_memory_byte_size": size}
    return {"name": name, "datatype": "UINT8", "shape": [size], "parameters": params}


def _over_budget(message: str) -> bool:
    """Whether ``message`` is the refusal of a copy over the budget of the requests in
    flight: the region, the bytes asked, the budget, the bytes in flight."""
    return message.startswith(f"input 'X': reading its {REGION} bytes of shared memory region "
                              "'soak' would bring the bytes copied by the requests in flight "
                              f"from ") and f"over this server's budget of {BUDGET} " in message  # fmt: skip


def test_reloads_under_batching_load_and_shared_memory_over_the_budget() -> None:
    key = f"/oipcodec-soak-{os.getpid()}"
    fd = os.open("/dev/shm" + key, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        os.ftruncate(fd, REGION)
        os.pwrite(fd, bytes(range(256)) * (REGION // 256), 0)
    finally:
        os.close(fd)
    outcomes: Counter[str] = Counter()
    problems: list[str] = []
    slowest = [0.0]
    try:
        with background(
            grpc_port=None,
            shared_memory="system",
            shared_memory_budget=BUDGET,
            log_level="critical",
        ) as server:
            base = f"http://{server.http_address}"
            register = {"key": key, "offset": 0, "byte_size": REGION}
            assert _post(base + "/v2/systemsharedmemory/region/soak/register", register)[0] == 200
            stop = time.monotonic() + SECONDS

            def batched(seed: int) -> None:
                rng = np.random.default_rng(seed)
                while time.monotonic() < stop:
                    rows = int(rng.integers(1, 17))
                    a = rng.integers(-100, 100, (rows, 16)).astype(np.int32)
                    inputs = [
                        {"name": n, "datatype": "INT32", "shape": [rows, 16], "data": a.ravel().tolist()}
                        for n in ("INPUT0", "INPUT1")
                    ]  # fmt: skip
                    status, answer = _post(base + "/v2/models/simple/infer", {"inputs": inputs})
                    if status == 200:
                        got = np.array(answer["outputs"][0]["data"]).reshape(rows, 16)
                        good = np.array_equal(got, 2 * a)
                        outcomes["batched 200" if good else "batched wrong"] += 1
                        if not good:
                            problems.append(f"wrong rows for {rows} rows")
                    elif status in (400, 503) and answer.get("error"):
                        outcomes[f"batched {status}"] += 1
                        if status == 400 and rows <= 8:
                            problems.append(f"{rows} rows refused: {answer['error']}")
                    else:
                        problems.append(f"batched: {status} {answer}")

            def reload() -> None:
                sizes = (8, 16)
                turn = 0
                while time.monotonic() < stop:
                    config = {"max_batch_size": sizes[turn % 2],
                              "dynamic_batching": {"max_queue_delay_microseconds": 2000}}  # fmt: skip
                    status, answer = _post(
                        base + "/v2/repository/models/simple/load",
                        {"parameters": {"config": json.dumps(config)}},
                    )
                    outcomes[f"reload {status}"] += 1
                    if status != 200:
                        problems.append(f"reload: {status} {answer}")
                    turn += 1
                    time.sleep(0.1)

            def shared() -> None:
                while time.monotonic() < stop:
                    status, answer = _post(
                        base + "/v2/models/identity/infer", {"inputs": [_in_region(REGION)]}
                    )
                    if status == 200:
                        outcomes["shm 200"] += 1
                    elif status == 503 and _over_budget(answer.get("error", "")):
                        outcomes["shm 503 budget"] += 1
                    else:
                        problems.append(f"shm: {status} {str(answer)[:200]}")

            def probe() -> None:
                while time.monotonic() < stop:
                    started = time.monotonic()
                    with urllib.request.urlopen(base + "/v2/health/live", timeout=20) as live:
                        assert live.status == 200
                    slowest[0] = max(slowest[0], time.monotonic() - started)
                    time.sleep(0.05)

            work = [lambda: batched(1), lambda: batched(2), reload, shared, shared, shared, probe]
            with ThreadPoolExecutor(len(work)) as pool:
                for done in [pool.submit(job) for job in work]:
                    done.result(timeout=SECONDS + 30)
            # Every copy was given back: one request reads two thirds of the budget.
            twice = {"inputs": [_in_region(REGION), _in_region(REGION, "Y")]}
            status, answer = _post(base + "/v2/models/identity/infer", twice)
            assert status == 200, answer
    finally:
        os.unlink("/dev/shm" + key)
    print(
        f"\nsoak with reloads and shared memory: {dict(outcomes)}; slowest health {slowest[0]:.3f} s"
    )
    assert problems == [], problems[:10]
    assert outcomes["batched 200"] and outcomes["shm 200"] and outcomes["reload 200"] > 5
    assert slowest[0] < 1.0
