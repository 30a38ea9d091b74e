"""Guard: Host and Origin checks and size limits, on a bare ASGI app (no Starlette)."""

from __future__ import annotations

import asyncio
from typing import Any, Dict, List, Tuple

import pytest

from ciyuan.serve.guard import Guard


async def _echo(scope: Dict[str, Any], receive: Any, send: Any) -> None:
    body = b""
    more = True
    while more:
        message = await receive()
        body += message.get("body", b"")
        more = message.get("more_body", False)
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
    await send({"type": "http.response.body", "body": body})


def _call(guard: Guard, method: str, path: str, headers: List[Tuple[bytes, bytes]],
          chunks: List[bytes]) -> Tuple[int, Dict[bytes, bytes], bytes]:
    messages = [{"type": "http.request", "body": c, "more_body": i < len(chunks) - 1} for i, c in enumerate(chunks)]
    sent: List[Dict[str, Any]] = []

    async def receive() -> Dict[str, Any]:
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    async def send(message: Dict[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "method": method, "path": path, "headers": headers}
    asyncio.run(guard(scope, receive, send))
    return sent[0]["status"], dict(sent[0]["headers"]), b"".join(m.get("body", b"") for m in sent[1:])


@pytest.fixture()
def guard() -> Guard:
    return Guard(_echo, allowed_hosts=["127.0.0.1", "localhost", "[::1]"], max_body=10, max_upload=100)


@pytest.mark.parametrize("host,ok", [(b"127.0.0.1:8765", True), (b"localhost", True), (b"[::1]:80", True),
                                     (b"LOCALHOST:1", True), (b"evil.example", False), (b"127.0.0.1.evil:80", False),
                                     (b"", False)])
def test_host(guard: Guard, host: bytes, ok: bool) -> None:
    status, headers, body = _call(guard, "GET", "/", [(b"host", host)], [b""])
    assert (status == 200) is ok
    assert b"content-security-policy" in headers
    if not ok:
        assert status == 403 and b"host name" in body


@pytest.mark.parametrize("origin,ok", [(None, True), (b"http://127.0.0.1:8765", True), (b"http://evil.example", False),
                                       (b"http://127.0.0.1:9999", False), (b"null", False)])
def test_origin_of_a_post(guard: Guard, origin: Any, ok: bool) -> None:
    headers = [(b"host", b"127.0.0.1:8765")] + ([(b"origin", origin)] if origin else [])
    status, _, _ = _call(guard, "POST", "/api/encode", headers, [b"{}"])
    assert (status == 200) is ok


def test_a_get_from_another_origin_is_answered(guard: Guard) -> None:
    # A cross-origin GET changes nothing, and the browser keeps its answer from the other page.
    status, _, _ = _call(guard, "GET", "/", [(b"host", b"127.0.0.1"), (b"origin", b"http://evil.example")], [b""])
    assert status == 200


@pytest.mark.parametrize("path,chunks,status", [
    ("/api/encode", [b"0123456789"], 200),
    ("/api/encode", [b"01234567890"], 413),
    ("/api/encode", [b"012345", b"67890"], 413),  # chunked, no Content-Length
    ("/api/upload/corpus", [b"x" * 60, b"y" * 40], 200),
    ("/api/upload/corpus", [b"x" * 60, b"y" * 41], 413),
])
def test_body_limits(guard: Guard, path: str, chunks: List[bytes], status: int) -> None:
    got, _, body = _call(guard, "POST", path, [(b"host", b"127.0.0.1")], chunks)
    assert got == status
    if status == 200:
        assert body == b"".join(chunks)  # the app reads the whole body, as sent
    else:
        assert b"too large" in body


def test_content_length_over_the_limit_is_refused_unread(guard: Guard) -> None:
    status, _, body = _call(guard, "POST", "/api/encode", [(b"host", b"127.0.0.1"), (b"content-length", b"5000")],
                            [b"x"])
    assert status == 413 and b"4.9 KiB" in body and b"--max-request-size" in body


def test_any_host_when_opened_on_purpose() -> None:
    open_guard = Guard(_echo, allowed_hosts=["*"], max_body=10, max_upload=10)
    assert _call(open_guard, "GET", "/", [(b"host", b"my-machine.lan:8765")], [b""])[0] == 200
