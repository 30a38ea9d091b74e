"""The Starlette application: the page and its files, the API routes, and the guard in front.

Example:
    >>> from starlette.testclient import TestClient
    >>> app = create_app(ServeConfig())
    >>> with TestClient(app, base_url="http://127.0.0.1:8765") as client:
    ...     client.get("/api/tokenizers").json()["methods"]
    ['fmm', 'bmm', 'bimm', 'dag']
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import AsyncIterator, Optional

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from ciyuan.errors import CiyuanError
from ciyuan.segment import Dictionary
from ciyuan.serve.api import Api, error_response
from ciyuan.serve.catalog import Catalog, load_tokenizer_file
from ciyuan.serve.config import ServeConfig, split_spec
from ciyuan.serve.guard import UPLOAD_PREFIX, Guard
from ciyuan.serve.segmentation import Dictionaries

__all__ = ["create_app", "STATIC_DIR"]

#: The page's HTML, CSS and JavaScript, shipped inside the package (no CDN, no build step).
STATIC_DIR = Path(__file__).resolve().parent / "static"


def _catalog(config: ServeConfig) -> Catalog:
    """The command line's tokenizers, loaded now so that a bad file stops the start with its
    error rather than surfacing on the page later."""
    catalog = Catalog()
    for spec in config.tokenizers:
        name, path = split_spec(spec)
        p = Path(path)
        tok = load_tokenizer_file(p)
        catalog.add_loaded(name, tok, origin="command line", source=str(p.resolve()))
    return catalog


def _dictionaries(config: ServeConfig) -> Dictionaries:
    dicts = Dictionaries()
    for spec in config.dictionaries:
        name, path = split_spec(spec)
        dicts.add(name, Dictionary.load(path))
    return dicts


async def _error(request: Request, exc: Exception) -> Response:
    if isinstance(exc, HTTPException) and exc.status_code in (404, 405):  # Starlette's own, made specific
        what = "no such page or API route" if exc.status_code == 404 else "method not allowed"
        return JSONResponse({"error": f"{what}: {request.method} {request.url.path}", "status": exc.status_code},
                            status_code=exc.status_code, headers=exc.headers)
    return error_response(exc)


def create_app(config: Optional[ServeConfig] = None) -> Starlette:
    """The ASGI application ``ciyuan serve`` runs (uvicorn, or Starlette's ``TestClient``).

    Raises:
        CiyuanError: a tokenizer or dictionary named in ``config`` does not load, or an
            ``--allow-dir`` folder does not exist.
    """
    config = config or ServeConfig()
    api = Api(config, _catalog(config), _dictionaries(config))

    async def index(request: Request) -> Response:
        return FileResponse(STATIC_DIR / "index.html", headers={"cache-control": "no-cache"})

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            api.close()

    routes = [
        Route("/", index),
        Route("/api/tokenizers", api.tokenizers),
        Route("/api/tokenizers/load", api.load, methods=["POST"]),
        Route("/api/tokenizers/{name}/tokenizer.json", api.download),
        Route(UPLOAD_PREFIX + "tokenizer", api.upload_tokenizer, methods=["PUT", "POST"]),
        Route(UPLOAD_PREFIX + "corpus", api.upload_corpus, methods=["PUT", "POST"]),
        Route("/api/encode", api.encode, methods=["POST"]),
        Route("/api/decode", api.decode, methods=["POST"]),
        Route("/api/segment", api.segment, methods=["POST"]),
        Route("/api/train", api.train, methods=["POST"]),
        Route("/api/train/{job}", api.train_status),
        Route("/api/eval", api.evaluate, methods=["POST"]),
        Route("/api/eval/{job}", api.eval_status),
        Route("/api/eval/{job}/plots/{name}", api.eval_plot),
        Mount("/static", StaticFiles(directory=STATIC_DIR), name="static"),
    ]
    guard = Middleware(Guard, allowed_hosts=config.allowed_hosts(), max_body=config.max_request_bytes,
                       max_upload=config.max_upload_bytes)
    app = Starlette(routes=routes, lifespan=lifespan, middleware=[guard],
                    exception_handlers={CiyuanError: _error, HTTPException: _error, Exception: _error})
    app.state.api = api  # the tests and the command reach the server's state here
    return app
