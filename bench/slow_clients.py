"""Slow clients against `semfs serve`'s HTTP host: is everybody else still served?

Serves a small corpus on a free port, then for ``--seconds`` runs an attack on loopback from other
client addresses (127.0.0.2 …, which Linux routes like 127.0.0.1):
- ``--slowloris`` connections that each send one header byte every 5 s, reconnecting when closed;
- ``--slow-bodies`` requests that announce a 10 MB body and send a byte of it every 5 s;
while a probe on 127.0.0.1 calls /health and another tenant's /search every half second. It prints the
probes' p50/p99 and how many of them failed (gave up after 10 s), and how the attack's connections
ended. The same run on the host as it was before (plain waitress: idle timeout only, 100
connections) is the baseline; ``--only guarded`` or ``--only plain`` runs one.

    .venv/bin/python bench/slow_clients.py [--seconds 45] [--slowloris 150] [--slow-bodies 10]
"""

from __future__ import annotations

import argparse
import json
import socket
import sys
import tempfile
import threading
import time
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "shared"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import pct

from semfs.bootstrap import build_container
from semfs.config import Settings
from semfs.http_host import HttpServer, JsonErrorTask, serve
from semfs.pipeline.intake.ingest import ingest_bytes
from semfs.server import ApiKeys, make_wsgi_app

GIVE_UP_S = 10.0
ADDRESSES = 5  # attacking client addresses (each under the per-client cap, so only the deadlines act)


def _plain(app: Any, port: int, limit: int) -> HttpServer:
    """The host before: waitress's create_server, idle timeout 60 s, default connection limit."""
    from waitress import create_server
    from waitress.channel import HTTPChannel

    class Channel(HTTPChannel):  # type: ignore[misc]
        error_task_class = JsonErrorTask

    server = create_server(app, host="127.0.0.1", port=port, threads=8, max_request_body_size=limit, channel_timeout=60)
    server.channel_class = Channel
    return HttpServer(server, server._map, server.task_dispatcher, int(server.effective_port))


def _attacker(port: int, source: str, first: bytes, stop: threading.Event, ended: Counter[str]) -> None:
    """One slow client: ``first`` at once, then a byte every 5 s; reconnects whenever it is closed."""
    while not stop.is_set():
        try:
            sock = socket.create_connection(("127.0.0.1", port), timeout=GIVE_UP_S, source_address=(source, 0))
            sock.sendall(first)
            while not stop.wait(5):
                sock.sendall(b"x")
                sock.setblocking(False)
                try:
                    answer = sock.recv(64)
                except BlockingIOError:
                    answer = None
                sock.setblocking(True)
                if answer is not None:  # answered (408, 429) or closed (b"")
                    ended[answer[9:12].decode() if answer else "closed"] += 1
                    break
            sock.close()
        except OSError as e:
            ended[type(e).__name__] += 1
            stop.wait(1)


def _probe(url: str, key: str | None, body: dict[str, Any] | None) -> float:
    headers = {"Content-Type": "application/json", **({"Authorization": f"Bearer {key}"} if key else {})}
    data = json.dumps(body).encode() if body is not None else None
    started = time.perf_counter()
    try:
        with urllib.request.urlopen(urllib.request.Request(url, data=data, headers=headers), timeout=GIVE_UP_S) as r:
            r.read()
    except OSError:
        return float("inf")
    return (time.perf_counter() - started) * 1000


def run(kind: str, args: argparse.Namespace, data: Path) -> None:
    settings = Settings(data_dir=data, embedder="hash")
    c = build_container(settings)
    for tenant in ("a", "b"):
        for i in range(20):
            text = f"# Note {i}\n\nThe {tenant} team's invoice terms, version {i}."
            ingest_bytes(c, tenant, text.encode(), f"{i}.md")
    keys = ApiKeys(settings.api_keys_file)
    key = keys.create("b")
    limit = settings.limits.max_file_bytes + 1024 * 1024
    app = make_wsgi_app(c, keys, None, limit)
    server = serve(app, "127.0.0.1", 0, settings.http, limit) if kind == "guarded" else _plain(app, 0, limit)
    base = f"http://127.0.0.1:{server.port}"
    stop, ended = threading.Event(), Counter[str]()
    slow_body = b"POST /search HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 10485760\r\n\r\n"
    attackers = [
        threading.Thread(
            target=_attacker,
            args=(server.port, f"127.0.0.{2 + i % ADDRESSES}", b"G" if i < args.slowloris else slow_body, stop, ended),
            daemon=True,
        )
        for i in range(args.slowloris + args.slow_bodies)
    ]
    for t in attackers:
        t.start()
    time.sleep(2)  # the attack in place
    health: list[float] = []
    search: list[float] = []
    deadline = time.monotonic() + args.seconds
    while time.monotonic() < deadline:
        health.append(_probe(base + "/health", None, None))
        search.append(_probe(base + "/search", key, {"query": "invoice terms", "limit": 5}))
        time.sleep(0.5)
    stop.set()
    server.shutdown()
    for name, values in (("/health", health), ("/search", search)):
        answered = [v for v in values if v != float("inf")]
        p50 = f"{pct(answered, 50):.1f}" if answered else "-"
        p99 = f"{pct(answered, 99):.1f}" if answered else "-"
        print(
            f"{kind:8} {name:8} probes {len(values):3}  failed {len(values) - len(answered):3}  "
            f"p50 {p50:>7} ms  p99 {p99:>7} ms"
        )
    print(f"{kind:8} attack connections ended: {dict(sorted(ended.items()))}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=45, help="how long the probe runs under attack")
    ap.add_argument("--slowloris", type=int, default=150, help="connections sending a header byte every 5 s")
    ap.add_argument("--slow-bodies", type=int, default=10, help="bodies sending a byte every 5 s")
    ap.add_argument("--only", choices=["guarded", "plain"], help="run one host only")
    args = ap.parse_args()
    for kind in [args.only] if args.only else ["plain", "guarded"]:
        with tempfile.TemporaryDirectory() as tmp:
            run(kind, args, Path(tmp))


if __name__ == "__main__":
    main()
