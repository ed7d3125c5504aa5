"""Many clients at once on `semfs serve`'s HTTP host: does any request wait on another?

Ingests the demo corpus (the local ONNX model), then serves it on a free port and measures, in one run:
1. the single-client baseline: one client's /search latency, on a quiet host;
2. then, while two /ask requests hang on an LLM endpoint that accepts and never answers and a file of
   one 1 MB token enriches:
   - 16 clients searching back to back (two tenants), and the host's requests per second;
   - 16 clients each pausing between searches (exponential think time, mean chosen so that they offer
     half the throughput the back-to-back run measured): their p50 against 3x the baseline (the target);
   - /health: its p99 against 200 ms (the target).

Back to back, 16 clients queue for the CPU whatever the host does: with a throughput of X requests
per second, Little's law puts their mean latency at 16 / X, so on 2 cores the ratio to one client's
latency has a floor of about 16 x (single-client rps) / X. Printed, not asserted against the target.

The same run with the old one-lock host is the comparison (``--locked`` wraps the app in one lock,
as `server.py` did before the resolver kept its state per thread).

    .venv/bin/python bench/concurrent_requests.py [--rounds 3] [--locked]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import socket
import statistics
import sys
import tempfile
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "shared"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import pct

from semfs.bootstrap import build_container
from semfs.config import Settings
from semfs.demo import ingest_demo, write_demo_corpus
from semfs.pipeline.intake.ingest import ingest_bytes
from semfs.server import ApiKeys, start_http

QUERIES = ["how long do we have to pay invoices", "e-bike sales in Germany", "password rules", "holiday policy"]


def _silent_llm() -> tuple[str, socket.socket]:
    """An endpoint that accepts connections and never answers (the LLM that hangs)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    held: list[socket.socket] = []
    threading.Thread(target=lambda: [held.append(listener.accept()[0]) for _ in iter(int, 1)], daemon=True).start()
    return f"http://127.0.0.1:{listener.getsockname()[1]}/v1", listener


def _call(url: str, key: str | None, body: dict[str, Any] | None = None, timeout: float = 300) -> float:
    headers = {"Content-Type": "application/json", **({"Authorization": f"Bearer {key}"} if key else {})}
    data = json.dumps(body).encode() if body is not None else None
    started = time.perf_counter()
    with urllib.request.urlopen(urllib.request.Request(url, data=data, headers=headers), timeout=timeout) as r:
        r.read()
    return (time.perf_counter() - started) * 1000


def _keep_asking(url: str, key: str, body: dict[str, Any], stop: threading.Event) -> None:
    """An /ask that hangs on the silent LLM, sent again each time the request's deadline ends it."""
    while not stop.is_set():
        with contextlib.suppress(OSError):  # the 503 the deadline gives, or the host shutting down
            _call(url, key, body, 900)


def _paced(search: Any, i: int, think_s: float) -> float:
    """One client's search after a think time drawn around ``think_s`` (exponential, seeded by ``i``)."""
    time.sleep(random.Random(i).expovariate(1 / think_s))
    return float(search(i))


CLIENTS = 16
HEALTH_GIVE_UP_S = 30.0


def _health(base: str) -> float:
    """One /health, in ms; a call still waiting after ``HEALTH_GIVE_UP_S`` counts as that long."""
    try:
        return _call(base + "/health", None, timeout=HEALTH_GIVE_UP_S)
    except OSError:  # the socket timed out: the host held /health behind the hanging requests
        return HEALTH_GIVE_UP_S * 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3, help="measurements of each part (median reported)")
    ap.add_argument("--locked", action="store_true", help="serve through one lock, as the host did before")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp)
        seeder = build_container(Settings(data_dir=data))
        write_demo_corpus(data / "corpus")
        for tenant in ("a", "b"):
            ingest_demo(seeder, tenant, data / "corpus")
        seeder.close()
        llm_url, _listener = _silent_llm()
        settings = Settings(
            data_dir=data, llm_base_url=llm_url, llm_model="m", llm_api_key="k", llm_timeout_s=600, http_threads=24
        )
        container = build_container(settings, background_workers=1)
        keys = ApiKeys(settings.api_keys_file)
        key = {t: keys.create(t) for t in ("a", "b")}
        server = start_http(container, keys, "127.0.0.1", 0)
        if args.locked:
            lock, inner = threading.Lock(), server._server.application

            def locked(environ: Any, start_response: Any) -> Any:
                with lock:
                    return inner(environ, start_response)

            server._server.application = locked
        base = f"http://127.0.0.1:{server.port}"
        search = lambda i: _call(base + "/search", key["ab"[i % 2]], {"query": QUERIES[i % len(QUERIES)]})  # noqa: E731
        for i in range(8):
            search(i)  # warm the model and the indexes
        single = [statistics.median(search(i) for i in range(40)) for _ in range(args.rounds)]
        p50_1 = statistics.median(single)
        # The hostile conditions, for the rest of the run: two /asks hanging on the silent LLM (each
        # resent when its request deadline ends it) and a file of one 1 MB token enriching.
        stop = threading.Event()
        hanging = ThreadPoolExecutor(2)
        ask = {"question": "what are the payment terms?"}
        for i in range(2):
            hanging.submit(_keep_asking, base + "/ask", key["ab"[i]], ask, stop)
        ingest_bytes(container, "c", b"x" * (1 << 20), "one-token.txt")
        time.sleep(1)
        closed, paced, health, rps = [], [], [], []
        for _ in range(args.rounds):
            started = time.perf_counter()
            with ThreadPoolExecutor(CLIENTS) as pool:
                closed.append(statistics.median(pool.map(search, range(CLIENTS * 10))))
            rps.append(CLIENTS * 10 / (time.perf_counter() - started))
        think_s = CLIENTS / (statistics.median(rps) / 2)  # each client's pause: half the measured capacity
        for _ in range(args.rounds):
            with ThreadPoolExecutor(CLIENTS) as pool:
                paced.append(statistics.median(pool.map(lambda i: _paced(search, i, think_s), range(CLIENTS * 10))))
        for _ in range(args.rounds):
            calls = 100 if not args.locked else 3  # behind one lock, each waits out the hanging /asks
            health.append(pct([_health(base) for _ in range(calls)], 99))
        stop.set()
        p50_closed, p50_paced, p99_h = statistics.median(closed), statistics.median(paced), statistics.median(health)
        print(
            json.dumps(
                {
                    "host": "one lock" if args.locked else "per-thread resolver",
                    "rounds": args.rounds,
                    "single_client_search_p50_ms": round(p50_1, 1),
                    "single_client_rps": round(1000 / p50_1, 1),
                    f"{CLIENTS}_clients_back_to_back_p50_ms": round(p50_closed, 1),
                    f"{CLIENTS}_clients_back_to_back_rps": round(statistics.median(rps), 1),
                    "back_to_back_ratio": round(p50_closed / p50_1, 2),
                    f"{CLIENTS}_clients_paced_think_ms": round(think_s * 1000, 1),
                    f"{CLIENTS}_clients_paced_p50_ms": round(p50_paced, 1),
                    "paced_ratio": round(p50_paced / p50_1, 2),
                    "target_ratio": 3.0,
                    "health_p99_ms_while_two_asks_hang_and_a_hostile_file_enriches": round(p99_h, 1),
                    "target_health_p99_ms": 200,
                }
            )
        )
        server.shutdown()
        container.close()
        hanging.shutdown(wait=False, cancel_futures=True)


if __name__ == "__main__":
    main()
