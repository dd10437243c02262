"""Shared-memory faults that used to end a process with SIGBUS, one scenario per run.

Run as ``python -m tests.support.shm_faults SCENARIO`` inside a private mount namespace with
a small tmpfs on /dev/shm (tests/server/test_server_shm_faults.py does it with ``unshare
-rm``), so filling /dev/shm never touches the host's. Prints one JSON object: what the client
saw and whether the server (or, for ``client-truncated``, this client process) is alive.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np


def _post(url: str, body: Any) -> tuple[int, Any]:
    request = urllib.request.Request(
        url, json.dumps(body).encode(), {"Content-Type": "application/json"}, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=20) as answer:
            return answer.status, json.loads(answer.read() or b"null")
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"null")


def _alive(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/v2/health/live", timeout=5) as answer:
            return bool(answer.status == 200)
    except OSError:
        return False


def _fill_dev_shm() -> None:
    """Write /dev/shm full (the namespace's small tmpfs), as other programs would."""
    with open("/dev/shm/filler", "wb") as filler:
        try:
            while True:
                filler.write(b"\xff" * 65536)
                filler.flush()
        except OSError:
            pass


def _sparse(key: str, size: int) -> None:
    """A POSIX shm object of ``size`` bytes that was never written (no pages behind it)."""
    fd = os.open("/dev/shm" + key, os.O_RDWR | os.O_CREAT, 0o600)
    os.ftruncate(fd, size)
    os.close(fd)


def _server_scenario(scenario: str) -> dict[str, Any]:
    from oipcodec.testing import background

    with background(shared_memory="system", grpc_port=None, log_level="warning") as server:
        url = server.http_url
        result: dict[str, Any] = {}
        if scenario == "truncate-race":
            result.update(_truncate_race(url))
        elif scenario == "many-regions":
            result.update(_many_regions(url))
        else:
            _fill_dev_shm()
            _sparse("/sparse", 1 << 20)
            status, _ = _post(
                url + "/v2/systemsharedmemory/region/sparse/register",
                {"key": "/sparse", "offset": 0, "byte_size": 4096},
            )
            result["register"] = status
            if scenario == "sparse-output":
                inputs = [
                    {"name": n, "datatype": "INT32", "shape": [1, 16], "data": list(range(16))}
                    for n in ("INPUT0", "INPUT1")
                ]
                params = {"shared_memory_region": "sparse", "shared_memory_byte_size": 64}
                body = {"inputs": inputs, "outputs": [{"name": "OUTPUT0", "parameters": params}]}
                result["status"], result["answer"] = _post(url + "/v2/models/simple/infer", body)
            else:  # sparse-input: an input in the region, answered as JSON
                params = {"shared_memory_region": "sparse", "shared_memory_byte_size": 4096}
                tensor = {"name": "X", "datatype": "FP32", "shape": [1024], "parameters": params}
                result["status"], result["answer"] = _post(
                    url + "/v2/models/identity/infer", {"inputs": [tensor]}
                )
                if result["status"] == 200:
                    result["sum"] = sum(result["answer"]["outputs"][0]["data"])
        result["alive"] = _alive(url)
        if not result["alive"]:
            os._exit(_report(result))
    return result


def _truncate_race(url: str) -> dict[str, Any]:
    """Requests read a 256 KiB input region while another thread shrinks the object to
    nothing and grows it back, for at most 2 s."""
    size = 1 << 18
    fd = os.open("/dev/shm/race", os.O_RDWR | os.O_CREAT, 0o600)
    os.pwrite(fd, b"\x01" * size, 0)
    _post(
        url + "/v2/systemsharedmemory/region/race/register",
        {"key": "/race", "offset": 0, "byte_size": size},
    )
    stop = threading.Event()

    def flap() -> None:
        while not stop.is_set():
            os.ftruncate(fd, 0)
            os.ftruncate(fd, size)

    flapper = threading.Thread(target=flap, daemon=True)
    flapper.start()
    params = {"shared_memory_region": "race", "shared_memory_byte_size": size}
    tensor = {"name": "X", "datatype": "UINT8", "shape": [size], "parameters": params}
    statuses: dict[str, int] = {}
    deadline = time.monotonic() + 2.0
    try:
        for _ in range(200):
            if time.monotonic() > deadline:
                break
            try:
                status, _ = _post(url + "/v2/models/identity/infer", {"inputs": [tensor]})
            except OSError:
                status = -1  # the server went away
            statuses[str(status)] = statuses.get(str(status), 0) + 1
            if status == -1:
                break
    finally:
        stop.set()
        flapper.join(5)
    return {"statuses": statuses}


def _many_regions(url: str) -> dict[str, Any]:
    """600 registrations of objects of 16 bytes against a server limited to 1024 descriptors:
    the status of each, then whether a new connection is still answered."""
    statuses: dict[str, int] = {}
    message = ""
    for index in range(600):
        key = f"/many-{index}"
        fd = os.open("/dev/shm" + key, os.O_RDWR | os.O_CREAT, 0o600)
        os.ftruncate(fd, 16)
        os.close(fd)
        try:
            status, answer = _post(
                url + f"/v2/systemsharedmemory/region/m{index}/register",
                {"key": key, "offset": 0, "byte_size": 16},
            )
        except OSError:
            status, answer = -1, None  # the connection was dropped
        statuses[str(status)] = statuses.get(str(status), 0) + 1
        if status != 200 and not message:
            message = answer.get("error", "") if isinstance(answer, dict) else repr(answer)
    inputs = [
        {"name": n, "datatype": "INT32", "shape": [1, 16], "data": list(range(16))}
        for n in ("INPUT0", "INPUT1")
    ]
    try:
        infer, _ = _post(url + "/v2/models/simple/infer", {"inputs": inputs})
    except OSError:
        infer = -1
    return {"statuses": statuses, "first_refusal": message, "infer": infer}


def _client_truncated() -> dict[str, Any]:
    """A hostile server truncates the client's output region before it answers; our client
    then reads the output it names."""
    from oipcodec.client import HttpClient
    from oipcodec.client.shm import SharedMemoryRegion
    from oipcodec.errors import OIPError

    region = SharedMemoryRegion.create("out", 4096)
    key = region.key

    class Hostile(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            body = b""
            if self.path.endswith("/infer"):
                fd = os.open("/dev/shm" + key, os.O_RDWR)
                os.ftruncate(fd, 0)
                os.close(fd)
                params = {"shared_memory_region": "out", "shared_memory_byte_size": 4096}
                output = {"name": "Y", "datatype": "FP32", "shape": [1024], "parameters": params}
                body = json.dumps({"model_name": "m", "outputs": [output]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Hostile)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    result: dict[str, Any] = {}
    try:
        with HttpClient(f"http://127.0.0.1:{server.server_address[1]}") as client:
            client.register_region(region)
            x = np.ones(4, dtype=np.float32)
            try:
                answer = client.infer("m", [region.input("X", x)], outputs=[region.output("Y")])
                result["sum"] = float(np.asarray(answer.output("Y").data).sum())
            except OIPError as exc:
                result["error"] = f"{type(exc).__name__}: {exc}"
    finally:
        server.shutdown()
        region.close()
    result["alive"] = True
    return result


def _report(result: dict[str, Any]) -> int:
    print(json.dumps(result), flush=True)
    return 0


def main() -> int:
    scenario = sys.argv[1]
    if scenario == "many-regions":  # a common default: the server inherits it
        resource.setrlimit(
            resource.RLIMIT_NOFILE, (1024, resource.getrlimit(resource.RLIMIT_NOFILE)[1])
        )
    if scenario == "client-truncated":
        return _report(_client_truncated())
    return _report(_server_scenario(scenario))


if __name__ == "__main__":
    sys.exit(main())
