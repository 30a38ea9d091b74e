"""The server's outer wall, one ASGI middleware in front of every route:

- a ``Host`` header the server does not answer to gets 403 (a web page elsewhere that points
  its own name at 127.0.0.1, DNS rebinding, cannot read the API);
- a request that changes something (``POST``, ``PUT``, ``DELETE``) from another origin gets
  403 (no other site can train or upload through the reader's browser);
- a body over its limit gets 413 with a message, before it is read when ``Content-Length``
  says so, and as soon as the limit is passed otherwise; uploads (``/api/upload/...``) have
  their own, larger limit;
- every answer carries a content security policy that allows this server's own files only,
  so the page can load nothing from the network.

Example:
    >>> guard = Guard(app=None, allowed_hosts=["127.0.0.1", "localhost"], max_body=1 << 20, max_upload=8 << 20)
    >>> guard.host_allowed(b"127.0.0.1:8765"), guard.host_allowed(b"evil.example:8765")
    (True, False)
"""

from __future__ import annotations

import json
from typing import Any, Awaitable, Callable, Dict, List, MutableMapping, Optional, Sequence

from ciyuan.serve.config import format_size

__all__ = ["Guard", "UPLOAD_PREFIX", "SECURITY_HEADERS"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

UPLOAD_PREFIX = "/api/upload/"

SECURITY_HEADERS = [
    (b"content-security-policy", b"default-src 'self'; img-src 'self' data: blob:; connect-src 'self'; "
                                 b"object-src 'none'; base-uri 'none'; frame-ancestors 'none'"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
]

_UNSAFE_METHODS = {"POST", "PUT", "PATCH", "DELETE"}


def _host_name(host: str) -> str:
    """``host`` without its port: ``"[::1]:80"`` -> ``"[::1]"``, ``"localhost:80"`` -> ``"localhost"``."""
    if host.startswith("["):
        return host[: host.find("]") + 1] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


async def _send_json(send: Send, status: int, message: str, headers: Sequence = ()) -> None:
    body = json.dumps({"error": message, "status": status}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            (b"connection", b"close"), *SECURITY_HEADERS, *headers]})
    await send({"type": "http.response.body", "body": body})


class Guard:
    """The middleware (see the module's list). ``allowed_hosts``: names without ports, or
    ``["*"]`` for any."""

    def __init__(self, app: Optional[ASGIApp], allowed_hosts: Sequence[str], max_body: int, max_upload: int) -> None:
        self.app = app
        self.any_host = "*" in allowed_hosts
        self.hosts = {h.lower() for h in allowed_hosts}
        self.max_body = max_body
        self.max_upload = max_upload

    def host_allowed(self, host: bytes) -> bool:
        return self.any_host or _host_name(host.decode("latin-1").lower()) in self.hosts

    def _origin_allowed(self, origin: bytes, host: bytes) -> bool:
        # Same origin: the page this server sent, whose Origin names this server's own host.
        scheme_host = origin.decode("latin-1").lower().split("://", 1)
        return len(scheme_host) == 2 and scheme_host[1] == host.decode("latin-1").lower()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            assert self.app is not None
            await self.app(scope, receive, send)
            return
        headers: Dict[bytes, bytes] = {}
        for key, value in scope.get("headers", ()):
            headers.setdefault(key.lower(), value)
        host = headers.get(b"host", b"")
        if not self.host_allowed(host):
            await _send_json(send, 403, f"this server does not answer to the host name {host.decode('latin-1')!r}; "
                                        "open it as http://127.0.0.1:PORT/ (or start it with --host)")
            return
        if scope["method"] in _UNSAFE_METHODS and b"origin" in headers and \
                not self._origin_allowed(headers[b"origin"], host):
            await _send_json(send, 403, "cross-origin requests are refused: use the page this server serves")
            return
        path: str = scope.get("path", "")
        upload = path.startswith(UPLOAD_PREFIX)
        limit = self.max_upload if upload else self.max_body
        flag = "--max-upload-size" if upload else "--max-request-size"
        what = "upload" if upload else "request body"
        length = headers.get(b"content-length")
        if length is not None and length.strip().isdigit() and int(length) > limit:
            await _send_json(send, 413, f"{what} too large: {format_size(int(length))} is over the limit of "
                                        f"{format_size(limit)} (start ciyuan serve with a larger {flag})")
            return
        await self._forward(scope, receive, send, limit, what, flag)

    async def _forward(self, scope: Scope, receive: Receive, send: Send, limit: int, what: str, flag: str) -> None:
        # The body is read here, whole, before the app sees the request: a body sent without a
        # Content-Length (chunked) is cut off at the limit with the same 413, and no route ever
        # holds more than the limit. (Inside the app, an error raised while reading would be
        # answered 500 by Starlette's outermost handler before this one could answer 413.)
        chunks: List[bytes] = []
        received = 0
        more = True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away
            chunk = message.get("body", b"")
            received += len(chunk)
            if received > limit:
                await _send_json(send, 413, f"{what} too large: over the limit of {format_size(limit)} "
                                            f"(start ciyuan serve with a larger {flag})")
                return
            chunks.append(chunk)
            more = message.get("more_body", False)
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": b"".join(chunks), "more_body": False}
            return await receive()

        async def secured_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                names = {k.lower() for k, _ in message.get("headers", ())}
                extra: List = [h for h in SECURITY_HEADERS if h[0] not in names]
                message = dict(message, headers=[*message.get("headers", ()), *extra])
            await send(message)

        assert self.app is not None
        await self.app(scope, replay, secured_send)
