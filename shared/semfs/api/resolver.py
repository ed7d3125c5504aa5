"""``ConcurrentResolver``: Powertools' HTTP API resolver with its per-request state kept per thread.

Powertools resolves one event at a time, as a Lambda function receives them: ``resolve`` puts the
event and the Lambda context on the ``BaseRouter`` class, and the resolver keeps the request's context
dict (the container the host attached, the matched route, the validated request) on itself. ``semfs
serve`` resolves many requests at once on waitress's threads, so that state would be shared: one
request could read another's event, tenant or container, which is why every request used to wait on
one lock. Here each of those attributes is one value per thread, and nothing else in a resolution is
per-request (the route table and the middlewares are built once at import and only read).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver


class _PerThread:
    """A data descriptor holding one value per thread (``factory()`` until a thread sets its own)."""

    def __init__(self, factory: Any) -> None:
        self._factory = factory
        self._name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self._name = name

    def _store(self, instance: Any) -> threading.local:
        return instance.__dict__.setdefault("_per_thread", threading.local())  # type: ignore[no-any-return]

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        if instance is None:
            return self
        store = self._store(instance)
        if not hasattr(store, self._name):
            setattr(store, self._name, self._factory())
        return getattr(store, self._name)

    def __set__(self, instance: Any, value: Any) -> None:
        setattr(self._store(instance), self._name, value)


def json_body(text: str) -> Any:
    """``json.loads`` whose every refusal is a ``JSONDecodeError`` (Powertools answers those 422): a
    number past Python's digit limit raised a bare ``ValueError``, which answered 500."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise
    except ValueError as e:
        raise json.JSONDecodeError(str(e), text, 0) from e


def malformed(event: Mapping[str, Any]) -> str | None:
    """What makes a request unreadable before any route sees it (Powertools raises a bare
    ``ValueError`` for it, a 500), or ``None``."""
    headers = {str(k).lower(): str(v) for k, v in (event.get("headers") or {}).items()}
    ctype = headers.get("content-type", "")
    if ctype.lower().startswith("multipart/form-data") and "boundary=" not in ctype.lower():
        return "multipart/form-data needs its boundary parameter"
    return None


class ConcurrentResolver(APIGatewayHttpResolver):
    """An ``APIGatewayHttpResolver`` safe to call from many threads at once (see the module docstring).
    Routers joined with ``include_router`` read these attributes through the resolver, so a route sees
    its own request's event and context in any thread."""

    current_event = _PerThread(lambda: None)
    lambda_context = _PerThread(lambda: None)
    context = _PerThread(dict)
    processed_stack_frames = _PerThread(list)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(json_body_deserializer=json_body, **kwargs)

    def methods_for(self, path: str) -> list[str]:
        """The methods the document gives ``path`` (none: no such path): a static path's own routes, so that
        ``/files/facets`` is not also read as ``/files/{file_id}``."""
        for routes in (self._static_routes, self._dynamic_routes):
            methods = sorted({r.method for r in routes if r.rule.match(path)})
            if methods:
                return methods
        return []

    def resolve(self, event: Mapping[str, Any], context: Any) -> dict[str, Any]:
        problem = malformed(event)
        if problem is not None:  # the uniform error body (api/app.py), 400
            body = {"error": {"code": "bad_request", "message": problem, "details": []}}
            return {"statusCode": 400, "headers": {"Content-Type": "application/json"}, "body": json.dumps(body)}
        method = str((event.get("requestContext") or {}).get("http", {}).get("method", "GET")).upper()
        allowed = self.methods_for(str(event.get("rawPath") or "/"))
        if allowed and method not in allowed:  # the path exists, not with this method: 405, not "no route"
            message = f"{method} is not allowed here; allowed: {', '.join(allowed)}"
            body = {"error": {"code": "method_not_allowed", "message": message, "details": []}}
            headers = {"Content-Type": "application/json", "Allow": ", ".join(allowed)}
            return {"statusCode": 405, "headers": headers, "body": json.dumps(body)}
        # this thread's event first; Powertools then also sets BaseRouter's class attributes, which
        # nothing reads any more: every read goes through a resolver or a router joined to it
        self.current_event = self._to_proxy_event(dict(event))
        self.lambda_context = context
        return super().resolve(event, context)
