"""Fuzz the native gRPC server's HTTP/2 connection (issue 47) for long: hostile HTTP/2 client
streams from tests/support/h2fuzz.py, each fed in-process to a fresh ``H2Protocol`` and checked
(the answer parses as HTTP/2 frames, the GOAWAY / RST_STREAM / grpc-status the RFCs name, no
stream left behind, each case under 2 s); after every batch a valid call on a new connection and
the process RSS within 64 MiB of the first batch's.

Run: ``python tools/h2_fuzz.py --cases 1000000 --seed 1``; prints the rate as it goes, then the
count per class; exit status 1 with the failing seed and case index on the first failure.
``--record`` records grpcio's channel sending one ModelInfer to the native server (through a
proxy on 127.0.0.1) into fuzz/corpus/h2/, the exchange the mutations start from.
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support import h2fuzz


def record() -> None:
    """One tritonclient (grpcio channel) ModelInfer to the native server, its client bytes kept."""
    import numpy as np
    import tritonclient.grpc as grpcclient

    from oipcodec.testing import background

    sent = bytearray()

    def pump(src: socket.socket, dst: socket.socket, keep: bool) -> None:
        try:
            while data := src.recv(1 << 16):
                if keep:
                    sent.extend(data)
                dst.sendall(data)
            dst.shutdown(socket.SHUT_WR)
        except OSError:  # the other side closed first: the exchange is over
            pass

    with background(grpc_impl="native", http_port=None, log_level="critical") as server:
        listener = socket.create_server(("127.0.0.1", 0))
        port = server.grpc_port
        assert port is not None

        def proxy() -> None:
            client, _ = listener.accept()
            upstream = socket.create_connection((server.host, port))
            threading.Thread(target=pump, args=(upstream, client, False), daemon=True).start()
            pump(client, upstream, True)

        thread = threading.Thread(target=proxy, daemon=True)
        thread.start()
        triton = grpcclient.InferenceServerClient(f"127.0.0.1:{listener.getsockname()[1]}")
        inputs = []
        for name in ("INPUT0", "INPUT1"):
            tensor = grpcclient.InferInput(name, [1, 16], "INT32")
            tensor.set_data_from_numpy(np.arange(16, dtype=np.int32).reshape(1, 16))
            inputs.append(tensor)
        triton.infer("simple", inputs)
        triton.close()
        thread.join(10)
    assert sent.startswith(h2fuzz.PREFACE), sent[:40]
    h2fuzz.RECORDED.parent.mkdir(parents=True, exist_ok=True)
    h2fuzz.RECORDED.write_bytes(bytes(sent[len(h2fuzz.PREFACE) :]))
    print(f"recorded {len(sent)} bytes into {h2fuzz.RECORDED}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--batch", type=int, default=20_000)
    parser.add_argument(
        "--rss-mib", type=int, default=64, help="the RSS growth allowed over the first batch's"
    )
    parser.add_argument("--record", action="store_true", help="record the ModelInfer exchange")
    args = parser.parse_args()
    if args.record:
        record()
        return 0
    try:
        tally = asyncio.run(
            h2fuzz.run(
                args.cases,
                args.seed,
                args.batch,
                report=lambda line: print(line, flush=True),
                rss_mib=args.rss_mib,
            )
        )
    except AssertionError as exc:
        print(f"FAILED: {exc}")
        return 1
    for kind, count in sorted(tally.items()):
        print(f"{count:9d} {kind}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
