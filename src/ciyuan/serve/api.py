"""The JSON API the page uses. Every route answers JSON; every error is ``{"error": message,
"status": code}`` with the code saying whose fault it is:

=====  ==========================================================================
400    the request is wrong (bad JSON, a missing field, invalid text or ids, a file
       that is no tokenizer); the message names what to change
403    a path outside every ``--allow-dir`` folder, a foreign ``Host`` or origin
404    no such tokenizer, dictionary, training job or file
409    a tokenizer that ``tokenizer.json`` cannot hold (its download)
413    a body over ``--max-request-size`` / ``--max-upload-size`` (:mod:`.guard`)
500    a bug: the message says so, and the server goes on serving
=====  ==========================================================================

Routes (all under ``/api``): ``GET tokenizers``, ``POST tokenizers/load`` (a file in an
allowed folder), ``PUT upload/tokenizer?name=FILE`` and ``PUT upload/corpus?name=FILE`` (the
file is the body), ``POST encode``, ``POST decode``, ``POST segment``, ``POST train`` and
``GET train/{id}``, ``GET tokenizers/{name}/tokenizer.json``, ``POST eval``, ``GET eval/{id}``
and ``GET eval/{id}/plots/{name}`` (the plots of ``ciyuan eval``).
"""

from __future__ import annotations

import itertools
import json
import logging
import re
import tempfile
from pathlib import Path
from typing import Any, Dict, Optional

from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response

from ciyuan.errors import CiyuanError, InvalidInputError, ModelError
from ciyuan.segment import METHODS
from ciyuan.serve.catalog import Catalog, Entry, UnknownTokenizerError, load_tokenizer_file
from ciyuan.serve.config import ServeConfig, format_size, split_spec
from ciyuan.serve.eval_jobs import EvalJobs, EvalRequest, eval_available
from ciyuan.serve.jobs import MODELS, TrainingJobs, TrainRequest, UnknownJobError
from ciyuan.serve.paths import AllowedDirs, ForbiddenPathError, Found, tokenizer_kind
from ciyuan.serve.segmentation import Dictionaries, NoDictionaryError
from ciyuan.serve.token_view import boundary_diff, encoding_view, token_kind

__all__ = ["Api", "ApiError", "error_response"]

log = logging.getLogger("ciyuan.serve")

#: At most this many tokenizers side by side in one request.
MAX_COMPARED = 8
#: At most this many tokens of each tokenizer are drawn (the counts and ids are whole).
MAX_DRAWN = 20_000


class ApiError(CiyuanError):
    """An error with its HTTP status (404 for a missing file, say)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _status(e: BaseException) -> int:
    if isinstance(e, ApiError):
        return e.status
    if isinstance(e, ForbiddenPathError):
        return 403
    if isinstance(e, (UnknownTokenizerError, NoDictionaryError, UnknownJobError)):
        return 404
    if isinstance(e, CiyuanError):
        return 400
    return 500


def error_response(e: BaseException) -> JSONResponse:
    """The JSON answer to ``e``: its status (see the module's table) and message."""
    if isinstance(e, HTTPException):
        status, message = e.status_code, str(e.detail)
    else:
        status = _status(e)
        message = str(e) if status < 500 else f"internal error ({type(e).__name__}); the server goes on: {e}"
    return JSONResponse({"error": message, "status": status}, status_code=status)


def _field(data: Dict[str, Any], name: str, kind: type, default: Any = ..., what: str = "") -> Any:
    """``data[name]`` if it is a ``kind``; else :class:`InvalidInputError` naming the field."""
    if name not in data:
        if default is ...:
            raise InvalidInputError(f"missing field {name!r}{what}")
        return default
    value = data[name]
    if value is None and default is None:
        return None
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise InvalidInputError(f"field {name!r} must be {kind.__name__ if kind is not list else 'a list'}, "
                                f"not {type(value).__name__}")
    return value


async def _json(request: Request) -> Dict[str, Any]:
    body = await request.body()
    try:
        data = json.loads(body or b"{}")
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise InvalidInputError(f"the request body is not valid JSON: {e}") from None
    if not isinstance(data, dict):
        raise InvalidInputError("the request body must be a JSON object")
    return data


def _safe_name(name: str) -> str:
    """A file name of an upload that cannot climb out of its folder: its last part, with only
    letters, digits, ``.``, ``-`` and ``_``."""
    base = re.sub(r"[^\w.\-]", "_", name.replace("\\", "/").rsplit("/", 1)[-1]).lstrip(".")
    return base[:128] or "upload"


def _entry_name(found: Found) -> str:
    """The name a tokenizer file found in a folder is offered under: a file named after its
    format (``tokenizer.json``, ``encoder.json``) takes its folder's name."""
    if found.path.name in ("tokenizer.json", "encoder.json") and found.path.parent.name:
        return found.path.parent.name
    return found.path.name.split(".")[0] or found.relative


class Api:
    """The API's state: the tokenizers, dictionaries, allowed folders, uploads and training jobs."""

    def __init__(self, config: ServeConfig, catalog: Catalog, dictionaries: Dictionaries) -> None:
        self.config = config
        self.catalog = catalog
        self.dictionaries = dictionaries
        self.allowed = AllowedDirs(config.allow_dirs)
        named = {}
        for spec in config.corpora:
            name, path = split_spec(spec)
            if not Path(path).exists():
                raise InvalidInputError(f"--corpus {path}: no such file or folder")
            named[name] = Path(path)
        # Words of Chinese text for fertility: the first dictionary's forward maximum matching.
        segmenter = dictionaries.segmenter(None, "fmm") if dictionaries.names() else None
        # Uploads and plots live here, and go with it when the server stops (made after every
        # check above, so that a bad option leaves nothing behind).
        self._tmp = tempfile.TemporaryDirectory(prefix="ciyuan-serve-")
        self.upload_dir = Path(self._tmp.name)
        self._upload_ids = itertools.count(1)
        self.uploaded_corpora: Dict[str, Path] = {}  # upload id -> file, for /api/train
        self.jobs = TrainingJobs(catalog, max_vocab=config.max_trained_vocab)
        self.evals = EvalJobs(catalog, named, self.upload_dir, segmenter)
        for found in self.allowed.scan():
            self._offer(found)

    def close(self) -> None:
        """Stop training and remove the uploads."""
        self.jobs.shutdown()
        self.evals.shutdown()
        self._tmp.cleanup()

    def _offer(self, found: Found) -> Entry:
        """The catalog's entry for a file of an allowed folder, made (not loaded) if it has none."""
        source = str(found.path)
        entry = self.catalog.by_source(source)
        if entry is None:
            entry = self.catalog.add(_entry_name(found), "folder", source,
                                     lambda: load_tokenizer_file(found.path), kind=found.kind)
        return entry

    # -- listing and loading -------------------------------------------------------------------

    async def tokenizers(self, request: Request) -> JSONResponse:
        return JSONResponse({
            "tokenizers": [e.describe() for e in self.catalog.entries()],
            "dictionaries": self.dictionaries.describe(),
            "methods": list(METHODS),
            "models": MODELS,
            "eval": {"unavailable": eval_available(), "corpora": self.evals.corpus_names()},
            "allow_dirs": [str(r) for r in self.allowed.roots],
            "limits": {"request": self.config.max_request_bytes, "upload": self.config.max_upload_bytes,
                       "request_text": format_size(self.config.max_request_bytes),
                       "upload_text": format_size(self.config.max_upload_bytes),
                       "vocab": self.config.max_trained_vocab},
        })

    async def load(self, request: Request) -> JSONResponse:
        """``{"path": ...}``: offer (and load) a file inside an allowed folder."""
        data = await _json(request)
        path = self.allowed.resolve(_field(data, "path", str))
        if not path.exists():
            raise ApiError(404, f"{data['path']}: no such file in the allowed folders")
        found = Found(path, path.name, tokenizer_kind(path) or "")
        entry = self._offer(found)
        await run_in_threadpool(entry.load)
        return JSONResponse(entry.describe())

    async def upload_tokenizer(self, request: Request) -> JSONResponse:
        """The body is a tokenizer file (any single file ``Tokenizer.load`` reads), ``?name=`` its name."""
        path = await self._save_upload(request)
        tok = await run_in_threadpool(load_tokenizer_file, path)
        entry = self.catalog.add_loaded(path.name.split(".")[0] or "upload", tok, origin="upload",
                                        source=f"uploaded {path.name}", kind=tokenizer_kind(path) or "")
        return JSONResponse(entry.describe())

    async def upload_corpus(self, request: Request) -> JSONResponse:
        """The body is a UTF-8 text file to train on; answers its upload id."""
        path = await self._save_upload(request)
        upload_id = path.parent.name
        self.uploaded_corpora[upload_id] = path
        return JSONResponse({"upload": upload_id, "name": path.name, "bytes": path.stat().st_size})

    async def _save_upload(self, request: Request) -> Path:
        body = await request.body()
        if not body:
            raise InvalidInputError("the upload is empty: send the file as the request body")
        folder = self.upload_dir / str(next(self._upload_ids))
        path = folder / _safe_name(request.query_params.get("name", "upload"))

        def write() -> None:  # up to --max-upload-size: off the event loop
            folder.mkdir()
            path.write_bytes(body)

        await run_in_threadpool(write)
        return path

    # -- tokenizing ----------------------------------------------------------------------------

    async def encode(self, request: Request) -> JSONResponse:
        """``{"text", "tokenizers": [names]}`` -> each one's tokens and counts, and where their
        boundaries differ."""
        data = await _json(request)
        text = _field(data, "text", str)
        names = _field(data, "tokenizers", list)
        if not names or len(names) > MAX_COMPARED or not all(isinstance(n, str) for n in names):
            raise InvalidInputError(f"field 'tokenizers' must name 1 to {MAX_COMPARED} tokenizers")
        entries = [self.catalog.entry(n) for n in names]  # 404 before any work

        def work() -> Dict[str, Any]:
            results, spans = [], {}
            for e in entries:
                tok = e.load()
                enc = tok.encode(text)
                results.append({"name": e.name, **encoding_view(tok, text, encoding=enc, limit=MAX_DRAWN)})
                spans[e.name] = list(enc.offsets)  # every token's, drawn or not
            return {"results": results, "differ": boundary_diff(len(text), spans) if len(results) > 1 else []}

        return JSONResponse(await run_in_threadpool(work))

    async def decode(self, request: Request) -> JSONResponse:
        """``{"tokenizer", "ids": [int]}`` -> the text and each id's token."""
        data = await _json(request)
        entry = self.catalog.entry(_field(data, "tokenizer", str))
        ids = _field(data, "ids", list)
        if not all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
            raise InvalidInputError("field 'ids' must be a list of integers")
        skip = bool(data.get("skip_special_tokens", False))

        def work() -> Dict[str, Any]:
            tok = entry.load()
            text = tok.decode(ids, skip_special_tokens=skip)
            pieces = tok.decode_bytes_batch([[i] for i in ids]) if ids else []
            specials = set(tok.special_tokens.values()) | set(tok.added_tokens)
            tokens = []
            for i, piece in zip(ids, pieces):
                token = tok.id_to_token(i)
                tokens.append({"id": i, "token": token, "bytes": piece.hex(" "),
                               "kind": token_kind(token, piece, i in specials, False)})
            return {"text": text, "tokens": tokens}

        return JSONResponse(await run_in_threadpool(work))

    async def segment(self, request: Request) -> JSONResponse:
        """``{"text", "methods": [...], "dictionary": name?}`` -> each method's words."""
        data = await _json(request)
        text = _field(data, "text", str)
        methods = _field(data, "methods", list, default=list(METHODS))
        if not all(isinstance(m, str) for m in methods):
            raise InvalidInputError("field 'methods' must be a list of method names")
        dictionary = _field(data, "dictionary", str, default=None)
        return JSONResponse(await run_in_threadpool(self.dictionaries.segment, text, methods, dictionary))

    # -- training ------------------------------------------------------------------------------

    async def train(self, request: Request) -> JSONResponse:
        """``{"model", "vocab_size", "text" | "upload", "name"?}`` -> 202 and the job."""
        data = await _json(request)
        upload = _field(data, "upload", str, default=None)
        path: Optional[Path] = None
        if upload is not None:
            path = self.uploaded_corpora.get(upload)
            if path is None:
                raise ApiError(404, f"no uploaded corpus {upload!r}; PUT it to /api/upload/corpus first")
        req = TrainRequest(model=_field(data, "model", str), vocab_size=_field(data, "vocab_size", int),
                           text=_field(data, "text", str, default=None), path=path,
                           name=_field(data, "name", str, default=None) or None)
        job = self.jobs.start(req)
        return JSONResponse({"job": job.describe()}, status_code=202)

    async def train_status(self, request: Request) -> JSONResponse:
        return JSONResponse(self.jobs.get(request.path_params["job"]).describe())

    # -- measuring (ciyuan eval) ---------------------------------------------------------------

    async def evaluate(self, request: Request) -> JSONResponse:
        """``{"tokenizers", "corpora", "text"?, "curves"?, "segment_words"?}`` -> 202 and the run."""
        data = await _json(request)
        names = _field(data, "tokenizers", list)
        corpora = _field(data, "corpora", list, default=["text"])
        if not all(isinstance(n, str) for n in names + corpora) or len(names) > MAX_COMPARED:
            raise InvalidInputError(f"fields 'tokenizers' (at most {MAX_COMPARED}) and 'corpora' must be lists "
                                    "of names")
        job = self.evals.start(EvalRequest(tokenizers=names, corpora=corpora, text=_field(data, "text", str, None),
                                           curves=bool(data.get("curves", False)),
                                           segment_words=bool(data.get("segment_words", False))))
        return JSONResponse({"job": job.describe()}, status_code=202)

    async def eval_status(self, request: Request) -> JSONResponse:
        return JSONResponse(self.evals.get(request.path_params["job"]).describe())

    async def eval_plot(self, request: Request) -> Response:
        path = self.evals.plot(request.path_params["job"], request.path_params["name"])
        return FileResponse(path, media_type="image/png")

    async def download(self, request: Request) -> Response:
        """The tokenizer as Hugging Face's ``tokenizer.json`` (``tokenizers`` and ``transformers`` load it)."""
        entry = self.catalog.entry(request.path_params["name"])

        def work() -> bytes:
            tok = entry.load()
            with tempfile.TemporaryDirectory(dir=self.upload_dir) as tmp:
                out = Path(tmp) / "tokenizer.json"
                try:
                    tok.save(out)
                except ModelError as e:
                    raise ApiError(409, f"{entry.name} cannot be written as tokenizer.json: {e}") from None
                return out.read_bytes()

        body = await run_in_threadpool(work)
        return Response(body, media_type="application/json",
                        headers={"content-disposition": 'attachment; filename="tokenizer.json"'})
