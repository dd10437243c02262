"""Write the harness's figures into the documentation, from one results file.

``oipcodec bench`` writes ``results.json``; the committed one is
``docs/benchmarks/results.json`` (with its chart, ``throughput.png``). This script writes, from
it and nothing else:

- ``docs/benchmarks.md``: the whole table, the machine and the date, how to read it and how to
  reproduce it;
- the excerpt in README.md between the ``bench-excerpt`` markers: one payload's block.

So a figure of the harness appears in the documentation only as this script wrote it, and
``--check`` (run by tests/package/test_docs.py) fails when a page differs from what the
committed results give. To refresh the figures::

    oipcodec bench --quick --output-dir docs/benchmarks
    python tools/bench_docs.py
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from oipcodec.bench.load import level_label, level_of, run_levels
from oipcodec.bench.runner import BenchOptions
from oipcodec.bench.table import render_table

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "docs" / "benchmarks" / "results.json"
PAGE = ROOT / "docs" / "benchmarks.md"
README = ROOT / "README.md"

EXCERPT_START = "<!-- bench-excerpt:start (written by tools/bench_docs.py) -->"
EXCERPT_END = "<!-- bench-excerpt:end -->"
#: The payload whose block the README shows, and the implementations kept in it.
EXCERPT_PAYLOAD = "tokens"
EXCERPT_IMPLEMENTATIONS = ("native", "pure", "tritonclient")


def provenance(results: dict[str, Any]) -> str:
    """One sentence: which command measured the figures, when, and on what machine."""
    machine = results["machine"]
    quick = " --quick" if results["options"].get("quick") else ""
    peers = ", ".join(
        f"{w['implementation']} {w['version']}" for w in results["workers"] if w.get("version")
    )
    loads = [f"{v:.1f}" for v in machine.get("load_average") or [] if v is not None]
    busy = ""
    if len(loads) == 2:
        busy = f"; 1-minute load average {loads[0]} before, {loads[1]} after: other work"
    unstable = unstable_rows(results)
    warning = (
        f". **{len(unstable)} of {len(results['results'])} rows never stabilised: their figures "
        "measure the machine's other work as much as the paths**"
        if unstable
        else ""
    )
    rounds = int(results["options"].get("rounds", 1) or 1)
    default_rounds = BenchOptions.quick_defaults().rounds if quick else 1
    quick += f" --rounds {rounds}" if rounds != default_rounds else ""
    return (
        f"`oipcodec bench{quick}` (oipcodec {results['oipcodec_version']}), "
        f"{results['created']}, {results['seconds']:.0f} s; {machine['cpus']} CPUs "
        f"(shared{busy}), {machine['platform']}, Python {machine['python']}"
        + (f"; peers: {peers}" if peers else "")
        + warning
    )


def excerpt(results: dict[str, Any]) -> str:
    """The README's excerpt: the header and rows of one payload's block of the table."""
    lines = render_table(results).splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"{EXCERPT_PAYLOAD} ("))
    block = [lines[start], lines[start + 1]]
    verdict = False
    for line in lines[start + 2 :]:
        if not line.strip():
            break
        # The verdict line (and its continuations) closes the block: kept whole.
        verdict = line.startswith("  native against pure") or (
            verdict and line.startswith("      ")
        )
        # A row is "{mark} {path label:<17} {implementation:<12} ...".
        words = line[20:].split()
        implementation = words[0] if words else ""
        if verdict or implementation in EXCERPT_IMPLEMENTATIONS:
            block.append(line)
    return "\n".join(block)


def readme_block(results: dict[str, Any]) -> str:
    """What README.md holds between the excerpt markers, markers included."""
    return "\n".join(
        [
            EXCERPT_START,
            "```text",
            excerpt(results),
            "```",
            "",
            f"Measured by {provenance(results)}. The whole table, the chart and how to read them:",
            "[docs/benchmarks.md](docs/benchmarks.md).",
            EXCERPT_END,
        ]
    )


def with_readme_block(readme: str, block: str) -> str:
    """README.md's text with the excerpt between its markers replaced by ``block``."""
    start = readme.index(EXCERPT_START)
    end = readme.index(EXCERPT_END) + len(EXCERPT_END)
    return readme[:start] + block + readme[end:]


def _number(value: float | None, digits: int = 0) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def _rate(entry: dict[str, Any]) -> str:
    """Requests/s, ``~`` after a figure that never stabilised, ``!`` where the load
    generator was saturated (as the table prints them)."""
    marks = ("~" if entry.get("stable") is False else "") + (
        "!" if entry.get("generator_saturated") else ""
    )
    return _number(entry.get("rps")) + (f" {marks}" if marks else "")


def tables(results: dict[str, Any]) -> str:
    """The harness's figures as one Markdown table per payload (the page's form of the table
    ``oipcodec bench`` prints)."""
    mode, levels = run_levels(results)
    top = max(levels)
    out = []
    for name, payload in results["payloads"].items():
        records = [r for r in results["results"] if r["payload"] == name]
        if not records:
            continue
        shape = "x".join(map(str, payload["shape"]))
        out += [f"### {name}: {shape} {payload['datatype']}", ""]
        out += [f"Latency and MB/s at {level_label(mode, top)}.", ""]
        head = ["path", "implementation", *(f"{level_label(mode, c)} req/s" for c in levels)]
        head += ["MB/s", "p50 ms", "p99 ms", "client CPU µs", "server CPU µs", "x pure"]
        head += ["wire kB", "client codec µs", "server codec µs"]
        out += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        notes: dict[str, list[str]] = {}
        pure = {
            r["path"]: {level_of(e): e for e in r.get("load", [])}.get(top, {})
            for r in records
            if r["implementation"] == "pure"
        }
        for record in records:
            path = results["paths"].get(record["path"], record["path"])
            implementation = record["implementation"]
            if record.get("unsupported") or record.get("error"):
                what = "not supported" if record.get("unsupported") else "error"
                reason = record.get("unsupported") or record.get("error")
                notes.setdefault(f"{what}: {reason}", []).append(f"{path} ({implementation})")
                continue
            best = results["best"].get(name) == f"{record['path']}/{implementation}"
            cells = [f"**{path}**" if best else path, implementation]
            by_level = {level_of(e): e for e in record.get("load", [])}
            load = by_level.get(top, {})
            if record.get("codec_only"):
                notes.setdefault(record["codec_only"], []).append(f"{path} ({implementation})")
                cells += ["-"] * (len(levels) + 6)
            else:
                cells += [_rate(by_level.get(c, {})) for c in levels]
                cells += [_number(load.get("mb_per_s"), 1), _number(load.get("p50_ms"), 2)]
                reference = pure.get(record["path"], {}).get("rps")
                ratio = load["rps"] / reference if reference and load.get("rps") else None
                cells += [_number(load.get("p99_ms"), 2)]
                cells += [_cpu(load.get("client_cpu_us")), _cpu(load.get("server_cpu_us"))]
                cells += [_number(ratio, 2)]
            codec = record.get("codec_us", {})
            wire = (record.get("request_bytes", 0) + record.get("response_bytes", 0)) / 1e3
            cells += [_number(wire, 1), _number(codec.get("client")), _number(codec.get("server"))]
            out.append("| " + " | ".join(cells) + " |")
        out.append("")
        out += [f"- {note}: {', '.join(rows)}" for note, rows in notes.items()]
        verdicts = results.get("verdicts", {}).get(name, {})
        if verdicts:
            words = "; ".join(
                f"{results['paths'].get(path, path)}: {verdict}"
                for path, verdict in verdicts.items()
            )
            out.append(f"- native against pure (requests/s and CPU per request): {words}")
        out.append("")
    return "\n".join(out).rstrip("\n")


def _cpu(value: float | None) -> str:
    """CPU microseconds per request; ``n/a`` where that side was not read."""
    return "n/a" if value is None else _number(value)


def unstable_rows(results: dict[str, Any]) -> list[str]:
    """The measured rows with a level that never stabilised (``payload path/implementation``)."""
    return [
        f"{r['payload']} {r['path']}/{r['implementation']}"
        for r in results["results"]
        if any(e.get("stable") is False for e in r.get("load", []))
    ]


def page(results: dict[str, Any]) -> str:
    """The text of docs/benchmarks.md."""
    _, levels = run_levels(results)
    options = results["options"]
    window_ms = options.get("duration", 1.0) * 1e3
    trials = options.get("max_trials", 10)
    spread = options.get("stability_percentage", 10)
    payloads = ", ".join(
        f"`{name}` ({'x'.join(map(str, p['shape']))} {p['datatype']}: {p['description']})"
        for name, p in results["payloads"].items()
    )
    implementations = "\n".join(
        f"- `{name}`: {text}" for name, text in results["implementations"].items()
    )
    return f"""---
hide:
  - toc
---

# Benchmarks: the harness

<!-- Written by tools/bench_docs.py from docs/benchmarks/results.json; do not edit by hand. -->

`oipcodec bench` starts the embedded server on 127.0.0.1 and measures, for each payload,
encoding path and client implementation, requests/s at concurrency {", ".join(map(str, levels))},
MB/s and latency percentiles, and the codec-only cost per request on each side.

Measured by {provenance(results)}.

Payloads: {payloads}.

Implementations:

{implementations}

{tables(results)}

![requests/s and latency per path and implementation](benchmarks/throughput.png)

## How to read it

One table per payload. A row is an encoding path (REST JSON flat or nested, REST with the
binary tensor data extension, the same gzip-compressed, gRPC with raw or typed contents) sent
by one client implementation; the path in bold had the most requests/s for the payload at the
highest concurrency, beyond the noise of every other row (no path is bold when the top rows are
within each other's noise). `native` and `pure` are oipcodec's client *and* server, with the native
kernels or with the pure-Python twins in both processes; `tritonclient` is Triton's client
against the native server.

- MB/s counts the tensor bytes both ways; the latency percentiles are per request at the
  highest concurrency; `wire kB` is the request body plus the response body.
- `client CPU µs` and `server CPU µs` are the cost of a request end to end, on each side: the
  CPU time the client's load processes spent per answered request, and the server's processes'
  (read from `/proc` for the embedded server: each thread's nanoseconds on a CPU, where the
  kernel's 10 ms clock ticks would be a fifth of a short window's; for a server given by
  `--url`, from the
  `process_cpu_seconds_total` of its Prometheus `/metrics` where it exports one, as the
  Prometheus client's process collector does in MLServer and KServe, else, for a server on this
  machine (127.0.0.1, localhost), from `/proc` for the processes holding its listening socket;
  `n/a` where none can be read, e.g. `--grpc-target` alone). On a shared machine requests/s and
  latency measure the neighbours as well; CPU per request barely moves with them, so it is the
  figure to trust when the two disagree.
- `client codec µs` and `server codec µs` are the codec work alone, timed in-process: encoding
  the request and decoding the answer on the client side; decoding the request and encoding
  the answer on the server side.
- The `kserve` and `mlserver` rows (where those packages are installed) are those servers' own
  codecs on the same bodies and messages, server side only: decode the request the way that
  server does until the model holds arrays, and encode the identity answer the way it sends it
  (`src/oipcodec/bench/paths/peers.py` lists each call). They have no requests/s unless `--url` /
  `--grpc-target` point at a running server of theirs. A path or datatype a peer cannot take is
  listed as `not supported`, with the reason. KServe and MLServer cannot be installed in one
  environment, so one run shows at most one of them.
- `x pure` is the row's requests/s against `pure` on the same path at the highest concurrency.
  Against a server given by `--url` / `--grpc-target` every row talks to that one server, so
  there `x pure` compares the client's kernels only (the table says so above its rows).
- The line under each table, "native against pure", is the verdict per path, from requests/s
  and CPU per request together (below).
- Each figure is the last three of a level's measurement windows ({window_ms:g} ms each here,
  after a warm-up), as perf_analyzer reports it. A figure marked `~` never stabilised: in
  {trials} windows, the last three never came within {spread:g}% of each other in requests/s
  and average latency. Read it as noise, not as a result. Stability alone never decides the
  bold path: a slower stable row does not beat a faster unstable one. `!` marks a row where
  the load generator used a whole core: it, not the server, was the limit.
- Short windows on a shared machine are noisy; the full run (all six payloads, 1 s windows,
  up to 10 of them) is steadier.

## Rounds, intervals and verdicts

`--rounds N` measures every row N times (`--quick` is `--rounds 3`, two 100 ms windows a row
each round). The implementations take turns row by row (each implementation's worker and
server are started once, then native measures a row, pure the same row, tritonclient the same
row, then the next row, and the whole grid again for each round), in the reverse order every
other round (A B C, C B A, A B C), so that neither side is always first after the previous
row or the machine's other work, a drift of the load over a round falls on both alike, and
native and pure of a row are measured seconds apart. The codec-only columns are timed in the
first round only. With one round the turns are the same, once.

Each figure is then the median of the rounds (requests/s, and the CPU per request on each
side), with a 95% bootstrap interval of the median (percentile method, 2,000 resamples, a
fixed seed); in one round the samples are the level's last three windows instead, which show
the noise within a run but not between runs. With 3 to 5 samples the interval is their whole
range. With rounds, a figure marked `~` is one whose median requests/s is not pinned within
the stability percentage: the interval's high over its low. Up to 5 rounds that is the rounds'
whole range; from 7 rounds on, one stray round on either side no longer widens it, so more
rounds can make a row stable where a range could only grow. `results.json` keeps each
round's figures under `rounds` (with the round and its place in the order measured) and the
intervals under `ci` of every level; the CSV has `Rounds` and the requests/s interval.

Two rows differ only where their intervals do not overlap. The verdict of native against pure
on a path reads ratios, native's figure over pure's, one a round (the two were measured
seconds apart, so a change of the machine's load between rounds cancels out; in one round,
the ratio of the two intervals' far ends). It is `faster` only where the CPU per request
ratio is at most 1/1.5 in every round (its whole interval) and requests/s agree (the median
of their ratios above 1); `slower` the reverse; and `no difference within noise` otherwise,
with a note when one figure parted alone or the two pointed opposite ways. So the harness
never names pure faster where the CPU per request says native costs less. CPU per request
carries the verdict because it holds on a busy machine: there one stalled round can put
either side's requests/s 5x behind, so requests/s must agree, not part in every round; and
a round in which either side's requests/s fell to a third of its median or less is left out
of both figures while two rounds remain (few answers carry the idle CPU, so its CPU per
request is inflated too). The
CPU margin is there because the rounds of a run share its servers: what moves from one run
to the next is not in their spread, and on a shared machine the CPU ratio of rows where both
sides do the same work moved by tens of percent between runs. A difference under 1.5x may
well be real, but one run cannot say so. CPU per request is client plus server where both
are read, else the client's alone. The bold (best) row is the highest median requests/s
only if no other row's interval reaches it; otherwise the tied rows are marked `=` in the
printed table and none is best.

## Gates: `bench compare` and `--slo`

```bash
oipcodec bench --quick --rounds 3 --output-dir base       # before a change
oipcodec bench --quick --rounds 3 --output-dir new        # after it
oipcodec bench compare base/results.json new/results.json --threshold 5 --chart compare.png
oipcodec bench --quick --slo "p99<10ms"                   # exit 1 when a row misses it
```

`oipcodec bench compare BASE.json NEW.json` lists every row and level in both files: requests/s
and CPU per request before and after, the change, and whether it is significant (the two 95%
intervals apart). A regression is a significant drop of requests/s, or rise of CPU per
request, past `--threshold` percent (default 5); any regression makes the exit status 1, so CI
can gate on it (2: a file that is not a results.json). `--chart FILE` draws the changes
(matplotlib). Rows in one file only are listed as such. Compare results of the same options:
with one round the intervals come from windows, which understate the noise between runs, so
give both runs `--rounds 3` or more.

`--slo "p99<10ms"` (several bounds separated by commas; `p50`, `p90`, `p95`, `p99`, `avg` or
`max`; `<` or `<=`; `us`, `ms` or `s`) gates a run: each row's goodput, the requests/s of its
highest level whose latency meets every bound, is printed after the table and kept in
`results.json` under `slo`; a row that meets it at no level makes the exit status 1. `bench
compare --slo` applies it to NEW.

## Reproduce

```bash
pip install ".[bench]"                     # ".[bench-kserve]" adds KServe's rows
oipcodec bench --quick                     # small and tokens at c=8, 3 rounds of two
                                           # 100 ms windows a row
oipcodec bench                             # all payloads: small, image, logits_bf16,
                                           # logits_fp32, strings, tokens; 1 s windows
oipcodec bench --payload image --path rest-json --concurrency 1,8,32
oipcodec bench --shape 4,128 --datatype FP16
oipcodec bench --quick --server-grpc-impl native
oipcodec bench --url http://host:8000 --grpc-target host:8001 --model identity
```

Options: `--payload NAME` (repeatable, or `a,b` as `--concurrency 1,8`), your own payload with
`--shape` and `--datatype`, `--path`, `--implementation` (native, pure, tritonclient, kserve,
mlserver; default: all installed; both lists too), `--no-peers`, `--timeout`, `--output-dir`
(default `./oipcodec-bench`), `--no-chart`, `--wide` (the codec columns in the printed
table); the load and measurement options are below. With `--url` /
`--grpc-target` the harness measures that server instead of starting one; only the client side
then changes between implementations. `--model` names the model to call (see below);
`results.json` lists under `implementations` only the implementations that ran (`skipped` names
the others).

Output: a progress line on stderr, the table on stdout (100 columns; `--wide` adds the codec
columns), and in the output directory `results.json` (every figure per level and every
window, stability, the generator's CPU use, the machine, the options, the peers' versions; a
peer's row carries `codec_only` or `unsupported` with the reason) and
`throughput.png` (drawn with matplotlib, from the `bench` extra; without it the run writes the
rest and says so). A sweep of three levels or more (`--concurrency 1:64`) adds `pareto.png`:
requests/s against p99 latency across the levels, a panel per payload and path, a line per
implementation, where more load stops buying requests/s and starts buying latency; the table
then lists every level's requests/s under it.

## Load and measurement, as perf_analyzer does them

The load options take perf_analyzer's names, so a command line moves between the two tools.

- Closed loop: `--concurrency 1,8` (a list), `--concurrency 1:64` (doubling: 1, 2, 4, ...,
  64; `1:64:4` multiplies by 4), or perf_analyzer's `--concurrency-range 1:64:8` (linear: 1,
  9, 17, ...). Each thread sends its next request once the answer to the previous one is in.
- Open loop: `--request-rate 100,200` (or `--request-rate-range 100:400:100`) with
  `--request-distribution constant|poisson`, or `--request-intervals FILE` (one interval in
  microseconds a line, repeated; perf_analyzer's form). Each request is due at its scheduled
  time and its latency counts from then, so a server that falls behind shows its queueing
  delay instead of slowing the load down (no coordinated omission). `--max-threads` (default
  16) threads send; a request due while all are busy waits, and the wait counts.
- `--latency-threshold MS` stops the sweep after the first level whose p99 latency (or
  `--percentile`'s) is above MS.
- Windows: `--measurement-interval MS` (default 1000; `--quick` 100) or
  `--measurement-mode count_windows` with `--measurement-request-count N`, after
  `--warmup-request-count N` answers (default one per sending thread). A level is stable once
  its last three windows are within `--stability-percentage` (default 10) of each other
  (max/min) in requests/s and in latency (the average, or `--percentile 50|90|95|99`); it
  stops there, or after `--max-trials` windows (default 10; `--quick` 2), and is then marked
  unstable in the table, the CSV and `results.json`. The figures are the last three windows
  together: requests/s, and latency average, p50, p90, p95, p99 and max.
- The load generator: `--load-processes N` spreads the sending threads over N processes,
  each with its own interpreter lock (default: one per 16 threads, at most half the CPUs).
  Every window records the generator's CPU use (CPU seconds per second, all processes) and
  the busiest process's share of a core; a row where it reached 90% is marked `!`.
- The sender: the REST and gRPC rows of `native` and `pure` are loaded by oipcodec's native
  load generator (`--sender native`, the default where it is built: HTTP/1.1 for REST, HTTP/2
  for gRPC with one connection and a stream per concurrent call; `--sender python` its twin,
  which for gRPC is grpcio's channel; `--sender client` the rows' own Python clients), so that
  those rows measure the server rather than a Python client. The codec columns and the
  tritonclient rows still compare the clients. v1, GraphPipe, shared memory, TLS or
  `--header` runs, Poisson and interval schedules, and `--load-processes` keep the clients;
  `results.json` names each level's `sender`.
- `--csv FILE` (or `-f`) writes perf_analyzer's `-f` layout with its `--verbose-csv` columns
  (`Concurrency` or `Request Rate`, `Inferences/Second`, `Client Send`, `Network+Server
  Send/Recv`, the four server columns, `Client Recv`, p50 to p99, `Avg latency`,
  `request/response`, `response wait`; times in microseconds), a row per path, implementation
  and level, then oipcodec's columns: payload, path, implementation, stable, the generator's
  CPU, max latency, client and server codec microseconds, client and server CPU microseconds
  per request (`n/a` where not read), the rounds, and the requests/s interval. `Client Send`
  and `Client Recv` are the client codec's encode and decode time; the server columns hold the
  server's own statistics where they were read (`server_breakdown` in `results.json`), else 0.
- `--profile-export FILE` writes every measured request (the last three windows of each level)
  in perf_analyzer's profile-export JSON: an experiment per row and level, each request's
  `timestamp` and `response_timestamps` in nanoseconds since the epoch (in open loop the
  timestamp is when the request was due), the windows' edges, and under `oipcodec` the row's
  payload, path, implementation and stability.

```bash
oipcodec bench --url http://127.0.0.1:8000 --path rest-binary --implementation native \
    --request-rate 50,100,200 --request-distribution poisson --latency-threshold 50 \
    --csv out.csv --profile-export profile.json
```

## Your own model: `--model`

`--model NAME` against a model that declares its inputs measures that model, as Triton's
perf_analyzer does. The harness reads the model's metadata (`GET /v2/models/NAME`, or gRPC
ModelMetadata when only `--grpc-target` is given) and its configuration (`GET
/v2/models/NAME/config`, or gRPC ModelConfig, for `max_batch_size`), and sends one request
generated from it: every declared input, with deterministic pseudo-random values of its
datatype and shape (BYTES: strings of 8 to 64 letters). The payloads (`--payload`,
`--datatype`, a `--shape` without a name) are not used then; they are for the identity model,
or any model that declares no inputs and echoes what it is sent (the default, `identity`, is
one).

```bash
oipcodec serve --model-module my_models &   # "score": IDS INT32 [-1, 4], WEIGHTS FP32 [4]
oipcodec bench --url http://127.0.0.1:8000 --grpc-target 127.0.0.1:8001 \\
    --model score --shape IDS:8,4
oipcodec bench --model simple --quick       # a demo model of the embedded server
oipcodec bench --model-module my_models --model score --shape IDS:8,4 --quick
```

The last form serves `my_models`'s `MODELS` in the embedded server (instead of the demo
models; the module is found from the working directory, as `oipcodec serve --model-module`
finds it), so `native` and `pure` measure oipcodec's server with your model too. With
`--url` / `--grpc-target` the server given serves the models, and `--model-module` is refused.

- A `-1` dimension needs `--shape NAME:d1,d2,...` (repeatable, one per input;
  perf_analyzer's form). Without it the run stops at once with one line naming the input and
  the option to give, e.g. `input 'IDS' has a variable dimension ([-1, 4]): give its size with
  --shape IDS:16,4`; no size is guessed, as perf_analyzer does not guess one.
- A batching model (`max_batch_size > 0` in its configuration) has the batch dimension first:
  it is `--batch-size N` (default 1, perf_analyzer's `-b`), and `--shape` gives the dimensions
  after it (the whole shape is taken too). Over gRPC alone the configuration is read with
  Triton's ModelConfig call (0 where the server lacks it, as KServe and MLServer do).
- `--input-data FILE` sends real values instead: a JSON file in perf_analyzer's form,
  `{{"data": [{{"IDS": [[1, 2, 3, 4]], "WEIGHTS": {{"content": [0.5, 1, 2, 4], "shape": [4]}}}}]}}`.
  Each entry of `data` is one request, and the entries are sent round robin. An input's value
  is a list (flat or nested; its shape from `--shape` or the declared shape, and a single `-1`
  follows from the number of values), an object `{{"content": [...], "shape": [...]}}`, or
  `{{"b64": "..."}}` (the raw little-endian bytes; not for BYTES). BYTES values are strings.
  Every request gives every input; integers must fit the datatype exactly. Not supported:
  perf_analyzer's sequences (a list of lists of requests), its directory of binary files,
  `validation_data`, and `--input-data random` / `zero` (random is the default here).
- Every answer is checked: an error status fails the request, and each declared output must
  be there, with its declared datatype and a shape its declared one accepts (`-1` matches any
  size). A row whose first request fails shows `error:` and the first error's message in the
  table; a window where later requests fail shows, under the row, how many failed and the
  first one's message. The identity model's rows also check, once per row, that the answer
  holds the values sent.
- Every path carries the generated request: REST JSON flat and nested, REST binary (and
  gzip), gRPC raw and typed, shared memory (a region per input, and per output sized by the
  answer to a first request; a server without the system shared-memory extension gets `not
  supported` there), oipcodec's clients and tritonclient. The `kserve` and `mlserver` codec
  rows time their servers' codecs on the identity model's payloads only, so with a model's
  request they are skipped (`skipped` in `results.json` says why).
- `results.json` holds the model's metadata (`model_metadata`) and the generated tensors
  (`payloads`, with `inputs` and `outputs`); MB/s counts the request's tensors and the
  answer's.

How it measures: one subprocess per implementation (its environment selects the kernels), which
starts its own server subprocess; the implementations take turns a row at a time; the load is
threads sharing one oipcodec client per process (tritonclient: one client per thread), closed
or open loop, in one process or `--load-processes`; each answer is checked against the model's
declared outputs, and once per row against the payload sent to an echo model, so a server that
answers wrong shows as an error, not as a fast path. Every window is bounded in time and in
count, requests have a timeout, and the servers are stopped at the end, on Ctrl-C and on error.

## The embedded server's front ends

The embedded server runs `oipcodec serve`'s default front ends: the native HTTP/1.1 front end
(in C, which answers a small JSON or binary inference by one fused decode, `predict` and
encode) and grpcio's gRPC server. `--server-http-protocol oipcodec` runs oipcodec's Python
protocol alone (the default of results older than the option), `httptools` and `h11`
uvicorn's, and `--server-grpc-impl native` the gRPC server on HTTP/2 in C (as `oipcodec serve
--http-protocol ... --grpc-impl native`). The native front ends are native code, so `pure`'s
server runs oipcodec's protocol and grpcio in their place: `native` against `pure` is the
whole request path, front end included. `results.json` keeps the choice under `options`
(`server_http_protocol`, `server_grpc_impl`) and what each implementation's server ran under
`workers` (`server_front_ends`); the table says so above its rows unless every row's server
ran the defaults, and
`bench compare` prints each run's front ends before its rows. With `--url` / `--grpc-target`
the server given runs its own, and these options are refused. Figures:
[Kernels and servers](measurements.md#the-embedded-servers-native-front-ends-end-to-end).

## Other servers: `--url` and `--grpc-target`

Pointed at any OIP server (the real Triton server, MLServer, KServe, `oipcodec serve`), the
harness measures every path that server takes. A path it lacks is one row saying so, with the
reason read from the server's metadata (`GET /v2` lists its extensions) or from its refusal of
the first request: `not supported by this server: no binary tensor data extension (its
metadata (GET /v2) does not list binary_tensor_data)` on MLServer, `no TensorRT Inference
Server v1 API`, `no GraphPipe endpoint` and `no system shared-memory extension` where those are
missing. A model that fails, or a server that answers wrong, is still an error row. Before
the sweep the harness reads the model's metadata and readiness over each transport given: a
model the server does not serve, a refused connection or an answer that is not the protocol's
is one line on stderr and exit status 2, and so is a run in which every row of a path failed.

```bash
oipcodec bench --url http://127.0.0.1:8000 --grpc-target 127.0.0.1:8001 \
    --model identity --shape INPUT0:64 --implementation native,tritonclient   # Triton
oipcodec bench --url https://models.example:8443 --ssl-https-ca-certificates-file ca.pem \
    --grpc-target models.example:8444 --ssl-grpc-use-ssl \
    --ssl-grpc-root-certifications-file ca.pem -H 'Authorization: Bearer TOKEN'
```

- **Server-side breakdown.** Where the server answers the statistics extension (Triton and
  `oipcodec serve`; not MLServer or KServe), each window's `load` entry in `results.json`
  carries `server`: the model's statistics read before and after the window, with
  perf_analyzer's arithmetic and names: `Request count`, `Avg request latency`, `Server
  Queue`, `Server Compute Input`, `Server Compute Infer`, `Server Compute Output` and `Server
  Overhead`, in microseconds per request (a stage's nanoseconds over that stage's count).
  `oipcodec.bench.serverstats` reads them for any script: `snapshot(url or target, model)`
  and `breakdown(before, after)`.
- **Headers and TLS.** `-H 'Name: value'` (repeatable) goes with every request of every path
  (over gRPC as metadata, the name in lower case); an `https://` URL uses TLS, checked against
  the system's certificates or `--ssl-https-ca-certificates-file`; `--ssl-https-verify-peer
  0` and `--ssl-https-verify-host 0` relax the check; `--ssl-https-client-certificate-file`
  and `--ssl-https-private-key-file` present a client certificate; gRPC over TLS is
  `--ssl-grpc-use-ssl` with `--ssl-grpc-root-certifications-file` (and
  `--ssl-grpc-private-key-file`, `--ssl-grpc-certificate-chain-file`). The names are
  perf_analyzer's; certificates and keys are PEM. A header may carry a credential, so no
  result file holds a header's value: `results.json` keeps each name with `<redacted>` for its
  value (the CSV and the profile export hold no headers). A URL's scheme is read in any case
  (`HTTPS://` is TLS for every client).
- An identity that names its one output itself (MLServer's `NumpyRequestCodec` answers
  `output-0`) is taken as the input echoed.

## Streaming: `--streaming`

`oipcodec bench --streaming` measures a model that answers one request with many responses
(docs: [Streaming](streaming.md)) over its two routes: REST `generate_stream` (server-sent
events, Triton's generate extension; path `rest-sse`) and gRPC `ModelStreamInfer` (path
`grpc-stream`). The model is `square_int32` unless `--model` names another, and each stream
asks for `--stream-responses N` responses (default 64): a model of `square_int32`'s form (its
first input an integer `[1]`) is sent N, one of `repeat_int32`'s (an integer `[-1]`) the N
values 0..N-1, its other inputs zeros; a model of any other form is an error on each row.

```text
oipcodec bench --streaming --stream-responses 16 --concurrency 1,4
oipcodec bench --streaming --model-module tests.support.streaming_models --model burst \
    --stream-responses 256 --concurrency 1,8
oipcodec bench --streaming --url http://host:8000 --grpc-target host:8001 --model my_model
```

Each level is a closed loop: c threads, each with a client of its own, send a stream as the
last one ended; one warm-up stream each, then the streams begun within three measurement
intervals (`--measurement-interval`, 3 x 1 s by default), each read to its end. The figures,
named as AIPerf names them (`results.json` keeps each one's avg, p50, p90, p99 and max; the
CSV of `--csv` has a row per path and level with these names):

| Column | What |
| --- | --- |
| `streams/s` | streams (requests) completed per second |
| `resp/s` | responses per second from the server, all streams together |
| `resp/s/str` | responses/s per stream: 1 / its mean ITL (AIPerf's per user) |
| `TTFT p50` | time to first response: from the request's send to its first response, ms |
| `ITL p50`, `ITL p99` | inter-response latency: between a stream's consecutive responses, ms |
| `str p50` | the stream's (request's) latency: from the send to its last response, ms |
| `cli us`, `srv us` | CPU µs per response of the client and of the server |

A row whose streams did not each bring N responses says how many they brought. The
implementations are oipcodec's clients (native by default; `--implementation pure` adds the
pure-Python twins); the peers do not stream here. `--rounds`, `--slo` and the open loop
(`--request-rate`, `--request-intervals`) are refused, and
`bench compare` refuses a streaming run's results (its rows have no windows to draw
intervals from). `generate_stream` opens a connection of its own per stream, so its TTFT
includes a TCP connect.

A server given by `--url` / `--grpc-target` that does not offer a route (no `generate_stream`,
or gRPC's `UNIMPLEMENTED` for `ModelStreamInfer`, as KServe answers) gets one row for that
path: `not supported by this server: no generate_stream route ...` with its refusal, the run
going on. Figures measured with it: [Kernels and servers](measurements.md#streaming).

## Next to perf_analyzer

`python benchmarks/load/perf_analyzer_check.py [--implementation NAME] [--load-processes N]`
runs NVIDIA's perf_analyzer and `oipcodec bench` on the same `oipcodec serve`, path and
concurrency, one after the other. Measured 2026-11-27 on the shared 2-core machine at a quiet
moment (load average 1-2), concurrency 8, perf_analyzer 2.41.0 (count windows, stability
50%), the harness's 3 s windows until stable, one sitting:

| client, processes | case | perf_analyzer req/s | p50 ms | bench req/s | p50 ms | ratios |
|---|---|---|---|---|---|---|
| tritonclient, 1 | REST binary, image | 2,364 | 3.12 | 426 | 18.98 | 0.18, 6.07 |
| tritonclient, 1 | gRPC raw, small | 3,814 | 2.03 | 2,708 | 2.83 | 0.71, 1.39 |
| tritonclient, 2 | REST binary, image | 1,923 | 3.92 | 639 | 11.63 | 0.33, 2.96 |
| tritonclient, 2 | gRPC raw, small | 3,233 | 2.33 | 2,540 | 3.03 | 0.79, 1.30 |
| native, 1 | REST binary, image | 2,080 | 3.64 | 2,265 | 3.28 | 1.09, 0.90 |
| native, 1 | gRPC raw, small | 3,396 | 2.21 | 2,514 | 3.00 | 0.74, 1.36 |
| native, 2 | REST binary, image | 2,028 | 3.65 | 1,942 | 3.81 | 0.96, 1.04 |
| native, 2 | gRPC raw, small | 3,816 | 2.04 | 2,467 | 3.20 | 0.65, 1.57 |

(image: 1x3x224x224 FP32, 602 kB each way; small: 1x16 FP32; ratios: bench / perf_analyzer,
requests/s then p50)

With oipcodec's own client the harness measures the image row as perf_analyzer does (within
the 10% / 15% targets). With tritonclient's Python HTTP client it does not: that client spends
milliseconds of CPU per 602 kB request in the measuring process, so the harness measures its
client, not the server. The small gRPC row stays 21-35% below perf_analyzer with every client:
on two cores the load generator and the server share the CPU, and a Python gRPC client's
per-request CPU (about twice perf_analyzer's C++ client's) is taken from the server. On a
machine with cores to spare for the generator, or with the generator on another machine, that
share goes away; here it is the limit, and the harness says so only when one of its processes
is saturated (`!`), which a shared CPU does not show.

## The native sender and wrk

`oipcodec.bench.sender.run(host, port, requests, connections=8, duration=..., rate=None)` is the
load generator behind `--sender`: one thread, written in C, with the interpreter lock released,
drives keep-alive HTTP/1.1 connections with pre-encoded requests (several are cycled), in
closed loop or at a fixed rate (open loop, each latency counted from the request's due time),
and returns every answer's latency and status, the errors by kind, and its own CPU time. It
reads answers with Content-Length or chunked coding, bounded, and counts a malformed answer, a
close mid-answer or a timeout as an error. Without the compiled module (Windows, or a build
without extensions) its Python twin does the same at about 2.5 times the CPU per request.

`oipcodec.bench.sender.run_grpc(host, port, messages, connections=1, streams=8, duration=...)`
is its HTTP/2 half, for gRPC unary calls (ModelInfer by default) over h2c: on the vendored
nghttp2's client sessions, in the same thread and loops, each connection keeps `streams` calls
in flight with pre-encoded request messages, a call is complete when its trailers carry
`grpc-status` 0, any other status is counted as an error (with its `grpc-message`), and answers
past `max_answer`, timeouts and closed connections are counted, never raised. Its twin is not a
second HTTP/2 stack in Python but grpcio's channel (one a connection) driving the same closed
and open loops: it measures what a Python gRPC client costs, about six times the native CPU
per call, and its CPU is the whole process's.

`python benchmarks/load/sender_vs_wrk.py` puts it next to wrk on one `oipcodec serve`, small
REST JSON at c=8, alternating. On the shared 2-core machine (load average 4-7, three
sittings) the median per-round ratio of its requests/s to wrk's was 1.18, 1.04 and 0.93, inside
a round-to-round noise of up to 4x; its own CPU per request was wrk's (19-25 against 23-26 us),
the Python twin's 55-62 us. The figures:
[Kernels and servers](measurements.md#the-native-sender-against-wrk).

`python benchmarks/load/sender_vs_wrk.py --grpc` does the same for small ModelInfer calls
against perf_analyzer `-i grpc` and h2load, 8 calls in flight. In three sittings at load
average 9-11 the native sender's calls/s were 1.20, 0.98 and 1.01 times perf_analyzer's (h2load's
0.65-0.99), for 50-56 us of its own CPU per call against perf_analyzer's 122-124 and the
grpcio twin's 287-316. The figures: [Kernels and
servers](measurements.md#the-native-senders-http2-half-against-perf_analyzer-and-h2load).

This page is written by `tools/bench_docs.py` from `docs/benchmarks/results.json`; to refresh
it, run the harness with `--output-dir docs/benchmarks` and then the script. Figures measured
with pytest-benchmark and with load generators are on [Kernels and servers](measurements.md).
"""


def main(argv: list[str] | None = None) -> int:
    """Write the page and the README excerpt, or with ``--check`` report whether they differ."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if a file would change")
    parser.add_argument("--allow-unstable", action="store_true",
                        help="write the pages from a run with unstable rows all the same (they "
                        "then say so at the top)")  # fmt: skip
    args = parser.parse_args(argv)
    results = json.loads(RESULTS.read_text())
    unstable = unstable_rows(results)
    # Figures that never stabilised measure the machine's other work, not the paths: the
    # front door of the project must not show them unless asked (and then says so).
    if unstable and not args.check and not args.allow_unstable:
        print(
            f"{RESULTS.name}: {len(unstable)} of {len(results['results'])} rows "
            f"never stabilised (e.g. {', '.join(unstable[:3])}); measure on a quiet machine "
            "(or with more --rounds), or give --allow-unstable",
            file=sys.stderr,
        )
        return 2
    wanted = {
        PAGE: page(results),
        README: with_readme_block(README.read_text(), readme_block(results)),
    }
    stale = [path for path, text in wanted.items() if path.read_text() != text]
    if args.check:
        for path in stale:
            print(f"{path.relative_to(ROOT)} differs from what tools/bench_docs.py writes")
        return 1 if stale else 0
    for path in stale:
        path.write_text(wanted[path])
        print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
