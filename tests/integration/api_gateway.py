"""An HTTP API as the rendered template configures it, in front of the local host: what a browser meets in AWS.

Built from the SAM-translated template's OpenAPI body (``iam_check.translated_template``): its routes, the
authorizer on each and its CORS configuration, and behaving as API Gateway documents for HTTP APIs:

- route selection: a path's own route before a greedy ``{proxy+}`` one; for one path, a route for the request's
  method before ``ANY``;
- a route behind the JWT authorizer answers 401 ``{"message": "Unauthorized"}`` to a request without a bearer
  token, before any integration runs;
- CORS: with a configuration, an OPTIONS request that matches no route is answered by API Gateway itself; for
  every other request from an allowed origin it adds the configured headers to the integration's answer and
  ignores any CORS headers the integration sent.

What it cannot see: the token's signature, issuer and audience (the real authorizer checks them; here the token
is the local host's API key, which that host checks), throttling, and the Lambda itself: the integration is the
local host, which runs the same router (the Lambda's own preflight answer is tested on its handler).
"""

from __future__ import annotations

import re
import threading
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

ANY = "x-amazon-apigateway-any-method"


@dataclass
class Route:
    path: str
    method: str  # lower case, or ANY
    authorized: bool


@dataclass
class HttpApi:
    routes: list[Route]
    allow_origins: list[str]
    allow_methods: list[str]
    allow_headers: list[str]
    max_age: int
    seen: list[tuple[str, str, int]] = field(default_factory=list)  # (method, path, status) per request

    def route(self, method: str, path: str) -> Route | None:
        def matches(route: Route) -> bool:
            pattern = re.escape(route.path).replace(r"\{proxy\+\}", ".+")
            pattern = re.sub(r"\\\{[^}]+\\\}", "[^/]+", pattern)
            return re.fullmatch(pattern, path) is not None and route.method in (method.lower(), ANY)

        found = [r for r in self.routes if matches(r)]
        found.sort(key=lambda r: ("{proxy+}" in r.path, r.method == ANY))
        return found[0] if found else None


def from_template(translated: dict[str, Any], page_origin: str) -> HttpApi:
    """The HTTP API of the translated template; ``WebOrigin`` (an ``Fn::If`` there) is ``page_origin``."""
    body = translated["Resources"]["HttpApi"]["Properties"]["Body"]
    routes = [
        Route(path, method, any(list(s) != ["NONE"] for s in spec.get("security", [])))
        for path, methods in body["paths"].items()
        for method, spec in methods.items()
    ]
    cors = body["x-amazon-apigateway-cors"]
    cors = cors.get("Fn::If", [None, cors])[1] if isinstance(cors, dict) and "Fn::If" in cors else cors
    return HttpApi(
        routes=routes,
        allow_origins=[page_origin],
        allow_methods=[m.upper() for m in cors["allowMethods"]],
        allow_headers=[h.lower() for h in cors["allowHeaders"]],
        max_age=int(cors.get("maxAge", 0)),
    )


def serve(api: HttpApi, upstream: str) -> tuple[ThreadingHTTPServer, str]:
    """The API on a port of its own (another origin than the page's), forwarding to ``upstream``."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            return

        def _cors(self) -> dict[str, str]:
            origin = self.headers.get("Origin")
            if origin not in api.allow_origins:
                return {}
            headers = {"Access-Control-Allow-Origin": origin}
            if self.command == "OPTIONS" and self.headers.get("Access-Control-Request-Method"):
                headers |= {
                    "Access-Control-Allow-Methods": ",".join(api.allow_methods),
                    "Access-Control-Allow-Headers": ",".join(api.allow_headers),
                    "Access-Control-Max-Age": str(api.max_age),
                }
            return headers

        def _answer(self, status: int, body: bytes, headers: dict[str, str]) -> None:
            api.seen.append((self.command, self.path, status))
            self.send_response(status)
            for name, value in {**headers, **self._cors(), "Content-Length": str(len(body))}.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

        def _handle(self) -> None:
            path = self.path.split("?", 1)[0]
            route = api.route(self.command, path)
            if route is None:
                if self.command == "OPTIONS":
                    return self._answer(204, b"", {})
                return self._answer(404, b'{"message":"Not Found"}', {"Content-Type": "application/json"})
            bearer = self.headers.get("Authorization", "")
            if route.authorized and not (bearer.startswith("Bearer ") and bearer[7:].strip()):
                return self._answer(401, b'{"message":"Unauthorized"}', {"Content-Type": "application/json"})
            length = int(self.headers.get("Content-Length") or 0)
            data = self.rfile.read(length) if length else None
            forwarded = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "origin", "content-length")}
            request = urllib.request.Request(upstream + self.path, data=data, method=self.command, headers=forwarded)
            try:
                with urllib.request.urlopen(request, timeout=120) as r:
                    status, body, headers = r.status, r.read(), dict(r.headers.items())
            except urllib.error.HTTPError as e:
                status, body, headers = e.code, e.read(), dict(e.headers.items())
            kept = {k: v for k, v in headers.items() if k.lower() in ("content-type", "content-disposition")}
            return self._answer(status, body, kept)  # the integration's CORS headers, if any, are ignored

        do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = do_OPTIONS = _handle

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"
