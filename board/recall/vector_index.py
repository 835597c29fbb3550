"""The background embedder: every passage in ``recall_passages`` given a vector by the configured model.

A pass (:meth:`VectorIndexer.run_once`) takes the next passages, in id order, that have no vector from the
current model (:attr:`board.recall.embedder.EmbeddingSettings.index_key`), embeds them in one request
(``memory.embedding_batch`` passages) and stores the vectors in one transaction. What is done is what
``recall_vectors`` holds, so a kill or a restart resumes where it stopped, and a change of model re-embeds every
passage in the same way, batch by batch (the old model's vectors are replaced as it goes, and are never
compared with the new model's). Each request is a ledger row (purpose ``embedding``), and none is made while
``allowed`` says why not (the board's: today's spend has reached ``budget.daily_usd``).

**A passage's vector is the mean of its sentences'** (:func:`sentences`, :func:`mean_vector`): each sentence is
an input of the same request, their normalised vectors are averaged and normalised again. A whole message
embedded at once is dominated by what it shares with thousands of others ("For <product>, churn moved to 12.3%;
I suggest we start a referral bonus.": the idea is one clause); averaged per sentence the idea keeps half the
weight. Measured with all-MiniLM-L6-v2 on the labelled set (notes/standing-and-recall.md): the vector half's
paraphrased recall@5 0.68 with whole passages, 0.90 with the mean of sentences. A one-sentence passage's vector is
the model's vector itself. Vectors made whole before this (same model) are kept and compared as they are.

:meth:`VectorIndexer.watch` runs passes until the board stops: never on an answer's path. While the model
fails (a wrong key, the server down) it waits longer between tries, up to :data:`MAX_BACKOFF_S`, and says so
once per failure streak.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import re
from collections.abc import Awaitable, Callable, Sequence

from board.llm.purpose import CallPurpose
from board.recall.embedder import Embedder, EmbeddingError
from board.recall.vector_store import VectorStore
from board.storage import Database

__all__ = ["MAX_BACKOFF_S", "MAX_SENTENCES", "VectorIndexer", "mean_vector", "sentences"]

log = logging.getLogger("sabha.recall")

#: The longest wait between tries while the embedding model fails.
MAX_BACKOFF_S = 300.0
#: Sentences of one passage embedded apart at most (the rest go with the last one).
MAX_SENTENCES = 8
_SENTENCE_END = re.compile(r"(?<=[.;!?])\s+")


def sentences(text: str) -> list[str]:
    """``text`` cut after each ``.``, ``;``, ``!`` or ``?`` that a space follows (so "12.3%" stays whole), at most
    :data:`MAX_SENTENCES` pieces; the text itself when it has one sentence."""
    parts = [part.strip() for part in _SENTENCE_END.split(text) if part.strip()]
    if len(parts) > MAX_SENTENCES:
        parts = [*parts[: MAX_SENTENCES - 1], " ".join(parts[MAX_SENTENCES - 1:])]
    return parts if len(parts) > 1 else [text]


def mean_vector(vectors: Sequence[Sequence[float]]) -> list[float]:
    """The normalised mean of ``vectors``, each normalised first; one vector is returned as it is."""
    if len(vectors) == 1:
        return list(vectors[0])
    summed = [0.0] * len(vectors[0])
    for vector in vectors:
        norm = math.sqrt(sum(v * v for v in vector)) or 1.0
        for i, v in enumerate(vector):
            summed[i] += v / norm
    total = math.sqrt(sum(v * v for v in summed)) or 1.0
    return [v / total for v in summed]


class VectorIndexer:
    """See the module docstring."""

    def __init__(self, db: Database, store: VectorStore, embedder: Embedder, *, interval_s: float = 2.0,
                 allowed: Callable[[], Awaitable[str | None]] | None = None) -> None:
        self.db = db
        self.store = store
        self.embedder = embedder
        self.interval_s = interval_s
        #: Why embedding must wait now (today's budget is spent), or None: asked before each batch.
        self.allowed = allowed
        self._after = 0  # passages up to this id have this model's vector (found so in this process)
        self._paused: str | None = None

    @property
    def key(self) -> str:
        """The model (and size) the vectors are made with."""
        return self.embedder.settings.index_key

    async def pending(self) -> int:
        """How many passages still lack this model's vector."""
        row = await self.db.fetchone(
            "SELECT count(*) AS n FROM recall_passages p LEFT JOIN recall_vectors v ON v.passage_id = p.id "
            "AND v.model = ? WHERE v.passage_id IS NULL", (self.key,))
        return int(row["n"]) if row else 0

    async def run_once(self) -> int:
        """Embed the next batch of passages; how many got a vector (raises :class:`EmbeddingError`). None while
        vectors cannot be searched here (nothing is paid for that could not be used)."""
        if await self.store.problem() is not None or await self._held():
            return 0
        rows = await self.db.fetchall(
            "SELECT p.id, p.text FROM recall_passages p LEFT JOIN recall_vectors v ON v.passage_id = p.id "
            "AND v.model = ? WHERE p.id > ? AND v.passage_id IS NULL ORDER BY p.id LIMIT ?",
            (self.key, self._after, self.embedder.settings.batch))
        if not rows:
            return 0
        pieces = [sentences(str(r["text"])) for r in rows]
        vectors = iter(await self.embedder.embed([s for p in pieces for s in p], CallPurpose.EMBEDDING))
        means = [mean_vector([next(vectors) for _ in p]) for p in pieces]
        await self.store.save([(int(r["id"]), self.key, v) for r, v in zip(rows, means, strict=True)])
        self._after = int(rows[-1]["id"])
        return len(rows)

    async def _held(self) -> bool:
        """Whether the budget holds embedding now (said once when it starts holding, once when it lets go)."""
        why = await self.allowed() if self.allowed is not None else None
        if why != self._paused:
            if why is not None:
                log.warning("recall: embedding waits: %s", why)
            else:
                log.info("recall: embedding goes on")
            self._paused = why
        return why is not None

    async def watch(self, stop: asyncio.Event) -> None:
        """Embed until ``stop``: a pass, then a pause (none while a pass filled a whole batch; longer and longer
        while the model fails)."""
        problem = await self.store.problem()
        if problem is not None:
            log.warning("recall by meaning is off (recall stays lexical): %s", problem)
            return
        failures = 0
        while not stop.is_set():
            try:
                done = await self.run_once()
                if failures:
                    log.info("recall: the embedding model %s answers again", self.embedder.settings.model)
                failures = 0
            except EmbeddingError as exc:
                if not failures:
                    log.warning("recall: embedding failed (%s); recall stays lexical for new passages until it "
                                "works, tried again with backoff", exc)
                failures, done = failures + 1, 0
            except Exception:  # the index is a nicety beside the answers: log, and try again later
                log.exception("recall: an embedding pass failed")
                failures, done = failures + 1, 0
            if done >= self.embedder.settings.batch:
                continue
            wait = min(MAX_BACKOFF_S, self.interval_s * 2 ** min(failures, 10)) if failures else self.interval_s
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), wait)

    async def close(self) -> None:
        """Close the search connection and the model's client."""
        await self.store.close()
        await self.embedder.close()
