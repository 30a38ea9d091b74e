"""`ciyuan serve`: its options and errors, and the real server (uvicorn on a free local port):
the page and API over HTTP, 413 / 403 answered by it and the server still serving, and a clean
stop on Ctrl-C that removes the uploads."""

from __future__ import annotations

import http.client
import json
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple

import pytest

from ciyuan.cli import main

pytest.importorskip("uvicorn")
pytest.importorskip("starlette")


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from ciyuan import Tokenizer
    from ciyuan.trainers import BpeTrainer

    root = tmp_path_factory.mktemp("serve-cli")
    Tokenizer.train(["hello world, hello tokens"] * 20, BpeTrainer(280, byte_level=True, show_progress=False)) \
        .save(root / "tok.json")
    (root / "words.txt").write_text("研究\n生命\n起源\n", encoding="utf-8")
    return root


def test_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "serve" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["serve", "--help"])
    out = capsys.readouterr().out
    for flag in ("--host", "--port", "--allow-dir", "--dict", "--corpus", "--max-request-size", "--max-upload-size"):
        assert flag in out


@pytest.mark.parametrize("args,fragment", [
    (["--port", "70000"], "--port must be from 0 to 65535"),
    (["--max-request-size", "lots"], "--max-request-size must be bytes"),
    (["--max-upload-size", "0"], "--max-upload-size must be at least one byte"),
    (["--max-vocab", "0"], "--max-vocab must be a positive integer"),
    (["{root}/none.json"], "none.json: no such file"),
    (["--allow-dir", "{root}/nowhere"], "--allow-dir {root}/nowhere: no such folder"),
    (["--dict", "{root}/nodict.txt"], "nodict.txt"),
    (["--corpus", "{root}/nocorpus"], "--corpus {root}/nocorpus: no such file or folder"),
])
def test_errors_before_listening(capsys: pytest.CaptureFixture[str], files: Path, args: List[str],
                                 fragment: str) -> None:
    assert main(["serve", *(a.format(root=files) for a in args)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("ciyuan serve: error: ") and fragment.format(root=files) in err


def test_a_taken_port_is_an_error(capsys: pytest.CaptureFixture[str], files: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        assert main(["serve", "--port", str(port), str(files / "tok.json")]) == 1
    assert f"cannot listen on 127.0.0.1:{port}" in capsys.readouterr().err


class Server:
    """A ``ciyuan serve --port 0`` subprocess and plain HTTP requests to it."""

    def __init__(self, args: List[str], tmpdir: Path) -> None:
        env = {**__import__("os").environ, "TMPDIR": str(tmpdir)}
        self.proc = subprocess.Popen([sys.executable, "-m", "ciyuan", "serve", "--port", "0", *args],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        line: List[str] = []
        reader = threading.Thread(target=lambda: line.append(self.proc.stdout.readline()), daemon=True)  # type: ignore
        reader.start()
        reader.join(60)
        if not line or "http://" not in line[0]:
            self.proc.kill()
            raise AssertionError(f"ciyuan serve did not start: {line}")
        url = line[0].split()[2]
        host_port = url.split("//")[1].rstrip("/")
        self.host, self.port = host_port.rsplit(":", 1)[0], int(host_port.rsplit(":", 1)[1])

    def request(self, method: str, path: str, body: Optional[bytes] = None,
                headers: Optional[Dict[str, str]] = None, chunked: bool = False) -> Tuple[int, Any]:
        conn = http.client.HTTPConnection(self.host, self.port, timeout=60)
        try:
            if chunked:
                conn.putrequest(method, path)
                conn.putheader("Transfer-Encoding", "chunked")
                for k, v in (headers or {}).items():
                    conn.putheader(k, v)
                conn.endheaders()
                assert body is not None
                chunks = [f"{len(body[i:i + 1000]):x}\r\n".encode() + body[i:i + 1000] + b"\r\n"
                          for i in range(0, len(body), 1000)] + [b"0\r\n\r\n"]
                for chunk in chunks:
                    try:
                        conn.send(chunk)
                    except (BrokenPipeError, ConnectionResetError):
                        # The server answered 413 and closed, before or after the last chunk:
                        # the answer is still there to read.
                        break
            else:
                conn.request(method, path, body=body, headers=headers or {})
            response = conn.getresponse()
            data = response.read()
            kind = response.getheader("content-type", "")
            return response.status, json.loads(data) if kind.startswith("application/json") else data
        finally:
            conn.close()

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGINT)  # Ctrl-C
        try:
            return self.proc.wait(30)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
            for stream in (self.proc.stdout, self.proc.stderr):
                if stream is not None:
                    stream.close()


@pytest.fixture()
def server(files: Path, tmp_path: Path) -> Iterator[Server]:
    s = Server([f"tok={files / 'tok.json'}", "--dict", str(files / "words.txt"), "--max-request-size", "4KB"],
               tmp_path)
    try:
        yield s
    finally:
        if s.proc.poll() is None:
            s.stop()


def _encode(server: Server, text: str = "hello world") -> Dict[str, Any]:
    status, data = server.request("POST", "/api/encode", json.dumps({"text": text, "tokenizers": ["tok"]}).encode(),
                                  {"content-type": "application/json"})
    assert status == 200, data
    return data


def test_the_real_server(server: Server, files: Path, tmp_path: Path) -> None:
    from ciyuan import Tokenizer

    status, page = server.request("GET", "/")
    assert status == 200 and b'<script src="/static/app.js"' in page
    assert _encode(server)["results"][0]["ids"] == Tokenizer.load(files / "tok.json").encode("hello world").ids
    status, data = server.request("POST", "/api/segment", json.dumps({"text": "研究生命起源"}).encode(),
                                  {"content-type": "application/json"})
    assert status == 200 and [w["text"] for w in data["methods"][0]["words"]] == ["研究", "生命", "起源"]

    big = json.dumps({"text": "x" * 5000, "tokenizers": ["tok"]}).encode()
    status, data = server.request("POST", "/api/encode", big, {"content-type": "application/json"})
    assert status == 413 and "--max-request-size" in data["error"]
    _encode(server)
    status, data = server.request("POST", "/api/encode", big, {"content-type": "application/json"}, chunked=True)
    assert status == 413 and "too large" in data["error"]
    _encode(server)
    status, data = server.request("GET", "/api/tokenizers", headers={"Host": "attacker.example"})
    assert status == 403 and "host name" in data["error"]
    _encode(server)
    status, data = server.request("POST", "/api/encode", json.dumps({"text": "x", "tokenizers": ["nope"]}).encode(),
                                  {"content-type": "application/json"})
    assert status == 404 and "'nope'" in data["error"]
    _encode(server)

    status, data = server.request("PUT", "/api/upload/corpus?name=c.txt", b"some text\n")
    assert status == 200
    assert list(tmp_path.glob("ciyuan-serve-*/*/c.txt"))  # the upload is in the server's temporary folder
    assert server.stop() == 0
    assert not list(tmp_path.glob("ciyuan-serve-*"))  # and goes with it
