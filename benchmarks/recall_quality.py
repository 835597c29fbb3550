"""How well recall finds what was asked for (issue 43's labelled set), with any embedding endpoint.

Builds a board on SQLite in a temporary folder, writes the labelled set's generated history through the board's
own stores (:mod:`tests.support.recall_history`: 200 meetings, 5,000 conversation messages, 20 documents),
indexes it (the background indexer's passes, run to the end), embeds every passage through the endpoint (the
background embedder's passes, :mod:`board.recall.vector_index`: the real SDK client, batching and vector store),
then asks the labelled questions (``tests/data/recall_questions.jsonl``) as the owner and scores recall@5 with the
tests' own scoring (:func:`tests.support.recall_history.score`) three ways in the same run:

* ``lexical only``: the lexical retrievers (passages, decisions, knowledge), what a board without a model has;
* ``vectors only``: the vector retriever alone (how good the model is by itself);
* ``fused``: what the board answers with, lexical and vectors fused by reciprocal rank.

Prints a table (recall@5 on the exact-term and the paraphrased questions, the paraphrases split into meetings and
conversations, the median wall time of a recall), the passages embedded and how long that took (wall: one
process and an HTTP server, unreliable on a busy machine), and with ``--misses`` each missed question.

The endpoint: ``--base-url`` and ``--model`` (``openai:<name>`` as ``memory.embedding_model`` takes it;
``--api-key`` or ``$EMBEDDINGS_API_KEY``; ``--dimensions``, ``--batch``). Without ``--base-url`` the tests' fake
(:mod:`tests.support.fakes.embeddings_api`: a hashed bag of words with a thesaurus written for these paraphrases,
no trained model) is started on 127.0.0.1. A local model::

    ~/embedvenv/bin/python scripts/serve_embeddings.py --port 8089 &
    python benchmarks/recall_quality.py --base-url http://127.0.0.1:8089/v1 --model openai:all-MiniLM-L6-v2

``--data DIR`` keeps the board (history and vectors) in DIR; run again with the same DIR and model, nothing is
embedded again (the embedder's passes find every passage done), so a change to fusion or ranking is measured in
seconds. ``--quick`` asks every fourth question only (the history is the same: the questions name it); the test
that keeps this script running uses it against the fake. Asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from board.app import Board, BoardSettings
from board.recall.embedder import EmbeddingSettings
from board.recall.semantic import VectorSearch
from board.recall.service import RecallService
from board.roles import RosterSpec
from board.room.store import MeetingStore
from board.workspace.paths import copy_default_workspace
from bot.app import all_migrations
from tests.support.fakes.embeddings_api import FakeEmbeddings
from tests.support.recall_history import Scores, generate, labelled, score, seed
from tests.support.vectors import EMBEDDING_MODEL


@dataclass(frozen=True)
class Endpoint:
    """The embedding model asked: ``memory.embedding_*`` as the board takes them."""

    model: str
    base_url: str
    api_key: str
    dimensions: int | None
    batch: int
    label: str


def _row(name: str, s: Scores, asked: list[dict[str, Any]]) -> str:
    def part(kind: str, where: str) -> str:
        ids = [i for i, q in enumerate(asked) if q["kind"] == kind and (where in q)]
        found = sum(1 for i in ids if asked[i] not in s.missed)
        return f"{found}/{len(ids)}"

    return (f"{name:<28} {s.recall('exact'):>6.2f} ({s.count('exact'):>2}) {s.recall('paraphrase'):>6.2f} "
            f"({s.count('paraphrase'):>2})   {part('paraphrase', 'cite'):>7} {part('paraphrase', 'text'):>7}"
            f"  {s.median_ms:>8.1f}")


async def measure(endpoint: Endpoint, asked: list[dict[str, Any]], root: Path, *, misses: bool) -> None:
    again = (root / "data").exists()  # --data of an earlier run: its history is there, its vectors too
    if not again:
        copy_default_workspace(root / "workspace")
    settings = BoardSettings(workspace=root / "workspace", data_dir=root / "data", roster=RosterSpec(),
                             recall_embedding=EmbeddingSettings(model=endpoint.model, base_url=endpoint.base_url,
                                                                api_key=endpoint.api_key, batch=endpoint.batch,
                                                                dimensions=endpoint.dimensions))
    async with await Board.open(settings, migrations=all_migrations()) as board:
        if not again:
            await seed(generate(), board.parts.sessions, MeetingStore(board.parts.db), board.parts.media.store)
        started = time.perf_counter()
        while await board.parts.recall_indexer.run_once():
            pass
        indexed = time.perf_counter() - started
        vectors = board.parts.recall_vectors
        if vectors is None:
            raise SystemExit("recall by meaning is off: the board took no embedding model")
        if problem := await vectors.store.problem():
            raise SystemExit(f"the vector store cannot search here: {problem}")
        started = time.perf_counter()
        embedded = 0
        while added := await vectors.run_once():
            embedded += added
        took = time.perf_counter() - started
        retrievers = board.parts.recall.retrievers
        lexical = RecallService([r for r in retrievers if not isinstance(r, VectorSearch)])
        alone = RecallService([r for r in retrievers if isinstance(r, VectorSearch)])
        rows = [("lexical only", await score(lexical, asked)), ("vectors only", await score(alone, asked)),
                ("fused (what the board uses)", await score(board.parts.recall, asked))]
    print(f"model: {endpoint.label}")
    print(f"history: {embedded} passages embedded in {took:.1f} s wall ({embedded / max(took, 1e-9):.0f} a second, "
          f"batches of {endpoint.batch}; measured under load), lexical indexing {indexed:.1f} s")
    print("\nrecall@5 (SQLite, asked as the owner)")
    print(f"{'':<28} {'exact':>11} {'paraphrased':>11}   {'meeting':>7} {'convers.':>7}  {'median ms':>8}")
    for name, s in rows:
        print(_row(name, s, asked))
    if misses:
        for name, s in rows:
            for q in s.missed:
                print(f"missed by {name}: [{q['kind']}] {q['question']} (expected {q.get('cite') or q.get('text')})")


async def run(args: argparse.Namespace) -> None:
    asked = labelled()
    if args.quick:
        asked = asked[::4]
    with tempfile.TemporaryDirectory(prefix="sabha-recall-quality-") as scratch:
        tmp = args.data or scratch
        if args.base_url:
            endpoint = Endpoint(args.model, args.base_url, args.api_key or "none", args.dimensions, args.batch,
                                f"{args.model} at {args.base_url}")
            await measure(endpoint, asked, Path(tmp), misses=args.misses)
            return
        async with FakeEmbeddings() as fake:
            endpoint = Endpoint(EMBEDDING_MODEL, fake.base_url, fake.key, args.dimensions, args.batch,
                                "the tests' fake (hashed words and a thesaurus written for these questions)")
            await measure(endpoint, asked, Path(tmp), misses=args.misses)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base-url", help="an OpenAI-compatible embeddings endpoint (default: the tests' fake)")
    parser.add_argument("--model", default="openai:all-MiniLM-L6-v2",
                        help="memory.embedding_model for --base-url (default openai:all-MiniLM-L6-v2)")
    parser.add_argument("--api-key", default=os.environ.get("EMBEDDINGS_API_KEY"),
                        help="the endpoint's key (default $EMBEDDINGS_API_KEY)")
    parser.add_argument("--dimensions", type=int, default=None, help="memory.embedding_dimensions (default unset)")
    parser.add_argument("--batch", type=int, default=64, help="memory.embedding_batch (default 64)")
    parser.add_argument("--quick", action="store_true", help="every fourth question only")
    parser.add_argument("--data", help="keep the board in this folder; a folder of an earlier run with the same "
                                       "model is measured again without embedding anything (default: a temporary "
                                       "folder)")
    parser.add_argument("--misses", action="store_true", help="print every question missed")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
