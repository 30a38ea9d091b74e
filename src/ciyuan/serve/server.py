"""Run the page on uvicorn: bind the socket first (so ``--port 0`` can say which port it got),
print the address, serve until Ctrl-C.

Example:
    >>> serve(ServeConfig(port=0))   # doctest: +SKIP
    ciyuan serve: http://127.0.0.1:41873/ (Ctrl-C to stop)
"""

from __future__ import annotations

import socket
import sys
from typing import IO, Optional

from ciyuan.errors import InvalidInputError
from ciyuan.serve.app import create_app
from ciyuan.serve.config import ServeConfig

__all__ = ["serve", "bind", "url_of"]


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host``:``port`` (0: a free port).

    Raises:
        InvalidInputError: the address cannot be used (taken, or not this machine's).
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host.strip("[]"), port))
        sock.listen(128)
    except OSError as e:
        sock.close()
        raise InvalidInputError(f"cannot listen on {host}:{port}: {e.strerror}; choose another --port "
                                "(0 picks a free one) or --host") from None
    sock.set_inheritable(True)
    return sock


def url_of(sock: socket.socket) -> str:
    """The page's address for a bound socket."""
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/"


def serve(config: ServeConfig, out: Optional[IO[str]] = None) -> None:
    """Serve the page until interrupted (Ctrl-C or SIGTERM: a clean stop, running jobs stopped
    and uploads removed); prints its address (first line of ``out``, standard output by
    default), and a warning when it is reachable from other machines."""
    import uvicorn

    out = out or sys.stdout
    app = create_app(config)  # loads the tokenizers first: a bad file stops here, before listening
    try:
        sock = bind(config.host, config.port)
    except BaseException:
        app.state.api.close()  # its temporary folder
        raise
    print(f"ciyuan serve: {url_of(sock)} (Ctrl-C to stop)", file=out, flush=True)
    if not config.loopback:
        print(f"ciyuan serve: warning: listening on {config.host}: other machines can reach this page and its "
              "API (no password); use the default --host 127.0.0.1 unless you mean it", file=sys.stderr)
    # access_log off: the page polls training progress, and each poll would be a line.
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on"))
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:  # uvicorn stops on Ctrl-C, then raises it again: this is how serving ends
        pass
    finally:
        sock.close()
