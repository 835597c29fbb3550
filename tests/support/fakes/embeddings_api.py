"""A fake OpenAI-compatible embeddings endpoint on 127.0.0.1, with a deterministic model that is crude but has
some sense of meaning.

``POST /v1/embeddings`` (what the official ``openai`` SDK's ``client.embeddings.create`` sends: ``model``,
``input`` as a string or a list of strings, optional ``dimensions`` and ``encoding_format``) answers OpenAI's
shape: ``{"object": "list", "data": [{"object": "embedding", "index": i, "embedding": [...]}], "model",
"usage": {"prompt_tokens", "total_tokens"}}``; a wrong bearer key gets 401 with OpenAI's error body;
:meth:`FakeEmbeddings.fail_next` answers the next requests with an error status. Every request is recorded.

The model (:func:`embed_text`) is a hashed bag of words, not a trained model: the text is lower-cased and
split into words, common words are dropped, each word is read through a small hand-made thesaurus
(``tests/data/embedding_synonyms.json``: "workplace" is read as "office"), cut to a crude stem, and hashed
(sha256) to one of ``dimensions`` signed slots; the vector is normalised. Texts that share words or
thesaurus entries land near each other; nothing else does. It is deterministic, so recall's figures with it
are repeatable, and it exercises the real SDK client, the wire format, batching and the vector store.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aiohttp import web

from tests.support.fakes.local_server import LocalServer

__all__ = ["DIMENSIONS", "EmbeddingRequest", "FakeEmbeddings", "embed_text"]

#: The vector size when a request asks for none.
DIMENSIONS = 512
SYNONYMS_FILE = Path(__file__).resolve().parents[2] / "data" / "embedding_synonyms.json"
_SYNONYMS: dict[str, str] = {k: v for k, v in json.loads(SYNONYMS_FILE.read_text(encoding="utf-8")).items()
                             if not k.startswith("_")}
_WORD = re.compile(r"[a-z0-9]+")
_STOP_WORDS = ("a an the and or but of to in on at for with by from as is are was were be been it its this that "
               "these those we us our you your i me my he she they them their what which who whom how why when "
               "where did do does about into over under up down out so than then there here all any some no not "
               "now new next more most very can could would should will just also only has have had")
_STOP = frozenset(_STOP_WORDS.split())


def _stem(word: str) -> str:
    for suffix, keep in (("ies", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", ""), ("e", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: len(word) - len(suffix)] + keep
    return word


def embed_text(text: str, dimensions: int = DIMENSIONS) -> list[float]:
    """The fake model's vector for ``text`` (see the module docstring)."""
    vector = [0.0] * dimensions
    for word in _WORD.findall(text.lower()):
        if word in _STOP:
            continue
        stem = _stem(_SYNONYMS.get(word, word))
        digest = hashlib.sha256(stem.encode()).digest()
        slot = int.from_bytes(digest[:4], "big") % dimensions
        vector[slot] += 1.0 if digest[4] & 1 else -1.0
    norm = math.sqrt(sum(v * v for v in vector))
    if norm == 0:
        vector[0], norm = 1.0, 1.0  # a text of common words only: one fixed direction, near nothing in particular
    return [v / norm for v in vector]


@dataclass(frozen=True)
class EmbeddingRequest:
    """One request the fake received."""

    model: str
    inputs: tuple[str, ...]
    dimensions: int | None
    headers: dict[str, str]


class FakeEmbeddings(LocalServer):
    """See the module docstring."""

    name = "fake embeddings API"

    def __init__(self, *, key: str = "test-embedding-key") -> None:
        super().__init__()
        self.key = key
        self.requests: list[EmbeddingRequest] = []
        self._failures: deque[int] = deque()

    @property
    def base_url(self) -> str:
        """What ``memory.embedding_base_url`` (the SDK's ``base_url``) points at."""
        return f"http://127.0.0.1:{self.port}/v1"

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/embeddings", self._embeddings)

    def fail_next(self, status: int, times: int = 1) -> None:
        """Answer the next ``times`` requests with ``status``."""
        self._failures.extend([status] * times)

    def texts(self) -> list[str]:
        """Every text embedded so far, in order."""
        return [t for r in self.requests for t in r.inputs]

    async def _embeddings(self, request: web.Request) -> web.Response:
        body: dict[str, Any] = await request.json()
        raw = body.get("input")
        inputs = (raw,) if isinstance(raw, str) else tuple(str(t) for t in raw or ())
        dims = body.get("dimensions")
        self.requests.append(EmbeddingRequest(str(body.get("model")), inputs, dims, dict(request.headers)))
        if request.headers.get("Authorization") != f"Bearer {self.key}":
            return web.json_response({"error": {"message": "Incorrect API key provided.", "code": "invalid_api_key",
                                                "type": "invalid_request_error"}}, status=401)
        if self._failures:
            status = self._failures.popleft()
            return web.json_response({"error": {"message": f"scripted failure {status}", "type": "server_error"}},
                                     status=status)
        if not inputs:
            return web.json_response({"error": {"message": "input must not be empty", "type": "invalid_request_error"}},
                                     status=400)
        size = int(dims) if isinstance(dims, int) else DIMENSIONS
        tokens = sum(max(1, len(t) // 4) for t in inputs)
        return web.json_response({
            "object": "list", "model": body.get("model"),
            "data": [{"object": "embedding", "index": i, "embedding": embed_text(t, size)}
                     for i, t in enumerate(inputs)],
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        })
