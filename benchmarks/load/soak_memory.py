"""A bounded memory soak of ``oipcodec serve`` on 127.0.0.1: mixed valid and invalid traffic,
the server's RSS sampled as it goes.

    python benchmarks/load/soak_memory.py                  # 120 s, oipcodec's HTTP protocol
    python benchmarks/load/soak_memory.py --seconds 30 --http-protocol httptools

The server runs in a subprocess (``python -m oipcodec serve``, REST only, the default 64 MB
body limit, ``--shared-memory system``, a model repository in a temporary folder with
``--model-control explicit``). ``--clients`` threads send, over raw sockets, a mix of: valid
inferences (small JSON, binary, gzip, a 4 MB binary body), health probes, malformed
requests (not JSON, a malformed head, a lying Content-Length over the limit), uploads
aborted mid-body (a 24 MB Content-Length, 64 kB of it, then close or reset), heads alone
(a 24 MB Content-Length and no body, then close), gzip bombs (1 MB inflating to 1 GiB), v1
inferences with classes (3 of 16, and all 6,000 of a wide output: the answer's header in
its body), GraphPipe inferences (and one naming an input twice, refused in the answer),
shared-memory churn (register a 64-byte region, infer from it, unregister; one POSIX object
per client, unlinked at the end) and repository reloads (v2 and v1 model control).
The server's RSS (VmRSS of /proc/<pid>/status) is sampled every ``--interval`` seconds.

It fails (exit status 1) on any 5xx answer, on a valid request not answered 200, or when
the RSS at the end is more than ``--rss-bound`` MB above the RSS after the warm-up (the
first ``--warmup`` seconds, in which malloc's arenas grow to what the traffic needs). The
RSS series and the tallies are printed, and written as JSON with ``--json``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from collections import Counter
from pathlib import Path

import numpy as np

# Run as a script, this file has benchmarks/load on sys.path: the repository goes first,
# for the test suite's free-port helper, and its src before it, so that the script speaks
# with the code its server runs.
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))
from oipcodec import graphpipe
from oipcodec.client.shm import SharedMemoryRegion
from tests.support.ports import free_port

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 60.0
ABORTED = 24 << 20


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def bomb() -> bytes:
    deflater = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    zeros = bytes(1 << 20)
    return b"".join(deflater.compress(zeros) for _ in range(1024)) + deflater.flush()


WIDE_CONFIG = {
    "max_batch_size": 8,
    "input": [{"name": "X", "data_type": "TYPE_FP32", "dims": [-1]}],
    "output": [
        {"name": "PROB", "data_type": "TYPE_FP32", "dims": [-1], "label_filename": "labels.txt"}
    ],
}
#: The model repository the soak serves: the demo models it sends to, a wide model with
#: labels for v1's classes, and one the soak reloads.
REPOSITORY = {
    "simple/model.py": "from oipcodec.server.demo import Simple\n\nMODEL = Simple()\n",
    "identity/model.py": "from oipcodec.server.demo import Identity\n\nMODEL = Identity()\n",
    "wide/model.py": (
        "from oipcodec.server import Model\n\n\n"
        "class Wide(Model):\n"
        "    def predict(self, inputs, parameters):\n"
        "        return {'PROB': inputs['X']}\n"
    ),
    "wide/config.json": json.dumps(WIDE_CONFIG),
    "wide/labels.txt": "".join(f"class {i}\n" for i in range(100)),
    "reloaded/1/model.py": (
        "import numpy as np\n\nfrom oipcodec.server import Model\n\n\n"
        "class Reloaded(Model):\n"
        "    weights = np.ones(1 << 16, np.float32)\n\n"
        "    def predict(self, inputs, parameters):\n"
        "        return dict(inputs)\n"
    ),
}
WIDE = 6000  # classes of the wide v1 answer: about 240 kB of header text, sent in the body
SHM_BYTES = 64


def write_repository(folder: Path) -> list[str]:
    """The soak's model repository in ``folder``; the names of its models."""
    for name, text in REPOSITORY.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return sorted({name.split("/")[0] for name in REPOSITORY})


def request(path: str, body: bytes, *headers: str, length: int | None = None) -> bytes:
    lines = [f"POST {path} HTTP/1.1", "Host: 127.0.0.1", "Connection: close", *headers]
    lines.append(f"Content-Length: {len(body) if length is None else length}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def read_status(sock: socket.socket) -> int | None:
    """The status of the answer on ``sock`` (read to the close), None if none came."""
    data = b""
    with contextlib.suppress(ConnectionResetError):
        while chunk := sock.recv(1 << 16):
            data += chunk
    if not data.startswith(b"HTTP/1."):
        return None
    return int(data[9:12])


class Traffic:
    def __init__(self, port: int, regions: list[SharedMemoryRegion] | None = None) -> None:
        self.port = port
        self.regions = regions or []
        self.local = threading.local()  # .index: the client thread's number
        self.bomb = bomb()
        rng = np.random.default_rng(0)
        a = rng.integers(-100, 100, 16).astype(np.int32).tolist()
        small = {"inputs": [
            {"name": "INPUT0", "datatype": "INT32", "shape": [1, 16], "data": a},
            {"name": "INPUT1", "datatype": "INT32", "shape": [1, 16], "data": a},
        ]}  # fmt: skip
        self.small = json.dumps(small).encode()
        self.gzipped = zlib.compress(self.small, wbits=16 + zlib.MAX_WBITS)
        raw = rng.integers(0, 255, 4 << 20, dtype=np.uint8).tobytes()
        header = json.dumps({"inputs": [{
            "name": "X", "datatype": "UINT8", "shape": [len(raw)],
            "parameters": {"binary_data_size": len(raw)},
        }]}).encode()  # fmt: skip
        self.large = (header + raw, len(header))
        v1_header = (
            'batch_size: 1 input { name: "INPUT0" dims: 16 } input { name: "INPUT1" dims: 16 } '
            'output { name: "OUTPUT0" cls { count: 3 } } output { name: "OUTPUT1" }'
        )
        ints = np.asarray(a, np.int32).tobytes()
        self.v1_small = request("/api/infer/simple", ints + ints, f"NV-InferRequest: {v1_header}")
        wide = f'batch_size: 1 input {{ name: "X" dims: {WIDE} }} output {{ name: "PROB" cls {{ count: 4294967295 }} }}'
        scores = rng.random(WIDE, dtype=np.float32).tobytes()
        self.v1_wide = request("/api/infer/wide", scores, f"NV-InferRequest: {wide}")
        pair = [np.asarray(a, np.int32).reshape(1, 16)] * 2
        self.graphpipe = request(
            "/graphpipe/simple", b"".join(graphpipe.encode_request(pair, ["INPUT0", "INPUT1"]))
        )
        self.graphpipe_twice = request(
            "/graphpipe/simple", b"".join(graphpipe.encode_request(pair, ["INPUT0", "INPUT0"]))
        )
        self.kinds = {
            "json": (self.valid_json, True),
            "gzip": (self.valid_gzip, True),
            "large-binary": (self.valid_large, True),
            "health": (self.health, True),
            "not-json": (self.not_json, False),
            "bad-head": (self.bad_head, False),
            "over-limit": (self.over_limit, False),
            "bomb": (self.gzip_bomb, False),
            "aborted": (self.aborted, None),
            "reset": (self.reset, None),
            "head-only": (self.head_only, None),
            "v1-classes": (lambda: self.exchange(self.v1_small), True),
            "v1-wide-classes": (lambda: self.exchange(self.v1_wide), True),
            "graphpipe": (lambda: self.exchange(self.graphpipe), True),
            "graphpipe-twice": (lambda: self.exchange(self.graphpipe_twice), True),
            "shm-churn": (self.shm_churn, True),
            "reload": (self.reload, True),
        }
        self.weights = [6, 2, 2, 3, 2, 1, 1, 1, 2, 1, 1, 2, 1, 2, 1, 2 if self.regions else 0, 1]
        self.reloads = 0

    def exchange(self, data: bytes) -> int | None:
        with socket.create_connection(("127.0.0.1", self.port), timeout=TIMEOUT) as sock:
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                sock.sendall(data)
            return read_status(sock)

    def valid_json(self) -> int | None:
        return self.exchange(request("/v2/models/simple/infer", self.small))

    def valid_gzip(self) -> int | None:
        body = request("/v2/models/simple/infer", self.gzipped, "Content-Encoding: gzip")
        return self.exchange(body)

    def valid_large(self) -> int | None:
        body, header = self.large
        return self.exchange(
            request("/v2/models/identity/infer", body, f"Inference-Header-Content-Length: {header}")
        )

    def health(self) -> int | None:
        return self.exchange(
            b"GET /v2/health/ready HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        )

    def not_json(self) -> int | None:
        return self.exchange(request("/v2/models/simple/infer", b"{not json" * 1000))

    def bad_head(self) -> int | None:
        return self.exchange(b"POST /v2/models/simple/infer HTTP/1.1\r\nBad Header\r\n\r\n")

    def over_limit(self) -> int | None:
        return self.exchange(request("/v2/models/simple/infer", b"x" * 100, length=1 << 30))

    def gzip_bomb(self) -> int | None:
        return self.exchange(
            request("/v2/models/identity/infer", self.bomb, "Content-Encoding: gzip")
        )

    def aborted(self) -> int | None:
        with socket.create_connection(("127.0.0.1", self.port), timeout=TIMEOUT) as sock:
            sock.sendall(request("/v2/models/identity/infer", b"x" * (1 << 16), length=ABORTED))
            time.sleep(0.05)
        return None

    def reset(self) -> int | None:
        with socket.create_connection(("127.0.0.1", self.port), timeout=TIMEOUT) as sock:
            sock.sendall(request("/v2/models/identity/infer", b"x" * (1 << 16), length=ABORTED))
            time.sleep(0.05)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        return None

    def shm_churn(self) -> int | None:
        """Register this thread's region, infer from it, unregister it: the worst status."""
        region = self.regions[self.local.index % len(self.regions)]
        name = region.name
        register = json.dumps({"key": region.key, "offset": 0, "byte_size": SHM_BYTES}).encode()
        infer = json.dumps({"inputs": [{
            "name": "X", "datatype": "UINT8", "shape": [SHM_BYTES],
            "parameters": {"shared_memory_region": name, "shared_memory_byte_size": SHM_BYTES},
        }]}).encode()  # fmt: skip
        base = f"/v2/systemsharedmemory/region/{name}"
        statuses = [
            self.exchange(request(f"{base}/register", register)),
            self.exchange(request("/v2/models/identity/infer", infer)),
            self.exchange(request(f"{base}/unregister", b"")),
        ]
        return next((s for s in statuses if s != 200), 200)

    def reload(self) -> int | None:
        """Load the loaded model ``reloaded`` again (its code read afresh), by turns over the
        v2 repository API and v1's model control."""
        self.reloads += 1
        if self.reloads % 2:
            return self.exchange(request("/v2/repository/models/reloaded/load", b""))
        return self.exchange(request("/api/modelcontrol/load/reloaded", b""))

    def head_only(self) -> int | None:
        with socket.create_connection(("127.0.0.1", self.port), timeout=TIMEOUT) as sock:
            sock.sendall(request("/v2/models/identity/infer", b"", length=ABORTED))
            time.sleep(0.2)
        return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=120.0, help="soak length (max 600)")
    parser.add_argument("--warmup", type=float, default=10.0, help="seconds before the baseline")
    parser.add_argument("--interval", type=float, default=5.0, help="seconds between samples")
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--rss-bound", type=float, default=50.0, help="MB over the baseline")
    parser.add_argument("--http-protocol", default="oipcodec")
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args(argv)
    seconds = min(args.seconds, 600.0)

    port = free_port()
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src") + os.pathsep + str(ROOT))
    folder = tempfile.TemporaryDirectory(prefix="oipcodec-soak-")
    loads = [arg for name in write_repository(Path(folder.name)) for arg in ("--load-model", name)]
    server = subprocess.Popen(
        [sys.executable, "-m", "oipcodec", "serve", "--host", "127.0.0.1",
         "--http-port", str(port), "--grpc-port", "-1", "--log-level", "error",
         "--http-protocol", args.http_protocol, "--shared-memory", "system",
         "--model-repository", folder.name, "--model-control", "explicit", *loads],
        env=env,
    )  # fmt: skip
    # Few and small: /dev/shm may be the host's. Each is unlinked on the way out.
    regions: list[SharedMemoryRegion] = []
    try:
        for i in range(args.clients):
            regions.append(SharedMemoryRegion.create(f"soak{i}", SHM_BYTES))
        traffic = Traffic(port, regions)
        deadline = time.monotonic() + 60
        while True:
            try:
                if traffic.health() == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline or server.poll() is not None:
                raise SystemExit("the server did not start")
            time.sleep(0.2)
        return soak(traffic, server.pid, seconds, args)
    finally:
        server.terminate()
        try:
            server.wait(20)
        except subprocess.TimeoutExpired:
            server.kill()
        for region in regions:
            region.close()
        folder.cleanup()


def soak(traffic: Traffic, pid: int, seconds: float, args: argparse.Namespace) -> int:
    tally: Counter[tuple[str, str]] = Counter()
    problems: list[str] = []
    lock = threading.Lock()
    stop = threading.Event()
    names = list(traffic.kinds)

    def client(seed: int) -> None:
        traffic.local.index = seed
        rng = random.Random(seed)
        while not stop.is_set():
            kind = rng.choices(names, traffic.weights)[0]
            call, valid = traffic.kinds[kind]
            try:
                status = call()
            except OSError as exc:
                status = None
                if valid is not None:
                    with lock:
                        problems.append(f"{kind}: {exc!r}")
            outcome = "none" if status is None else f"{status // 100}xx"
            with lock:
                tally[kind, outcome] += 1
                if (
                    (status is not None and status >= 500)
                    or (valid is True and status != 200)
                    or (valid is False and not (status is not None and 400 <= status < 500))
                ):
                    problems.append(f"{kind}: {status}")

    start = time.monotonic()
    series = [(0.0, rss_mb(pid))]
    threads = [threading.Thread(target=client, args=(i,)) for i in range(args.clients)]
    for thread in threads:
        thread.start()
    baseline = None
    while (now := time.monotonic() - start) < seconds:
        time.sleep(min(args.interval, seconds - now))
        now = time.monotonic() - start
        series.append((round(now, 1), rss_mb(pid)))
        print(f"t={now:6.1f} s  RSS {series[-1][1]:7.1f} MB", flush=True)
        if baseline is None and now >= args.warmup:
            baseline = series[-1][1]
    stop.set()
    for thread in threads:
        thread.join()
    time.sleep(1.0)  # the last aborted connections are closed by now
    end = rss_mb(pid)
    series.append((round(time.monotonic() - start, 1), end))
    baseline = series[1][1] if baseline is None else baseline
    fives = sum(n for (_, outcome), n in tally.items() if outcome == "5xx")
    figures = {
        "seconds": seconds,
        "requests": sum(tally.values()),
        "tally": {f"{k} {o}": n for (k, o), n in sorted(tally.items())},
        "responses_5xx": fives,
        "rss_mb_series": [(t, round(mb, 1)) for t, mb in series],
        "rss_start_mb": series[0][1],
        "rss_after_warmup_mb": baseline,
        "rss_end_mb": end,
        "rss_max_after_warmup_mb": max(mb for t, mb in series if t >= args.warmup),
        "problems": problems[:20],
    }
    series_text = ", ".join(f"{t:g}s:{mb:.0f}" for t, mb in series)
    print(json.dumps({k: v for k, v in figures.items() if k != "rss_mb_series"}, indent=1))
    print(f"RSS series (MB): {series_text}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1))
    ok = not problems and fives == 0 and end - baseline <= args.rss_bound
    print("PASS" if ok else "FAIL", f"(RSS {baseline:.1f} -> {end:.1f} MB, {fives} 5xx)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
