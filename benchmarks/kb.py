"""Knowledge base: indexing throughput and search latency on a generated corpus (50 MB by default).

Generates Markdown documents (headings, paragraphs of Zipf-distributed words; a sixth of them
private to each of five roles, the rest shared) in a temporary workspace, then measures, in
the same run:

- reading and chunking alone (the baseline: no SQLite) against a full index build (MB/s, ratio);
- an incremental sync with nothing changed (a stat per file) and with one file edited;
- search latency p50 / p99 for 2-3 word queries as a role (shared + its own scope, filtered
  in SQL) and as the owner (every scope), against a ``LIKE`` scan of the same chunks for the
  first word (the no-index baseline), with the ratio of the medians.

Searches go through the knowledge base's own ``search`` (the index's worker thread included, as a
turn's tool call makes them); the ``LIKE`` baseline reads the index file with a connection of its own.
It prints figures and never asserts on time. ``--mb`` picks the corpus size; ``--quick`` is a
0.3 MB corpus and 20 queries (a test runs every benchmark so).
Run: ``.venv/bin/python benchmarks/kb.py [--mb 50] [--queries 400]``
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from board.memory.knowledge.base import KnowledgeBase, KnowledgeSettings
from board.memory.knowledge.chunking import chunk_document

ROLES = ("research", "finance", "strategy", "content", "critic")
SYLLABLES = ("ka", "ri", "to", "mu", "sen", "dal", "vo", "pra", "lin", "qu", "est", "ran", "bo", "tel", "nar", "gi")


def vocabulary(size: int, rng: random.Random) -> list[str]:
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))))
    return sorted(words)


def generate(folder: Path, megabytes: float, rng: random.Random, vocab: list[str]) -> tuple[int, int]:
    """Markdown files of about 100 KB each; returns (files, bytes)."""
    weights = [1 / (rank + 1) for rank in range(len(vocab))]  # Zipf: a few words are everywhere
    target = int(megabytes * 1024 * 1024)
    written = files = 0
    while written < target:
        scope = "shared" if files % 6 == 0 or files % 6 == 5 else ROLES[files % 6 - 1]
        lines = [f"# Report {files}: {' '.join(rng.choices(vocab[:2000], k=3))}", ""]
        size = 0
        while size < 100_000:
            lines += [f"## {' '.join(rng.choices(vocab[:5000], k=4))}", ""]
            for _ in range(rng.randint(2, 6)):
                paragraph = " ".join(rng.choices(vocab, weights=weights, k=rng.randint(40, 160))) + "."
                lines += [paragraph, ""]
                size += len(paragraph)
        text = "\n".join(lines)
        path = folder / scope / f"report-{files:05d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written += len(text.encode("utf-8"))
        files += 1
    return files, written


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=float, default=50.0, help="corpus size in MB (default 50)")
    parser.add_argument("--queries", type=int, default=400, help="search queries per mode (default 400)")
    parser.add_argument("--seed", type=int, default=16)
    parser.add_argument("--quick", action="store_true", help="a 0.3 MB corpus, 20 queries")
    args = parser.parse_args()
    if args.quick:
        args.mb, args.queries = 0.3, 20
    rng = random.Random(args.seed)
    vocab = vocabulary(30_000, rng)

    with tempfile.TemporaryDirectory(prefix="sabha-kb-bench-") as tmp:
        workspace, data = Path(tmp) / "workspace", Path(tmp) / "data"
        folder = workspace / "knowledge"
        began = time.perf_counter()
        files, size = generate(folder, args.mb, rng, vocab)
        mb = size / 1024 / 1024
        print(f"corpus: {files} Markdown files, {mb:.1f} MB ({time.perf_counter() - began:.1f} s to generate)")

        began = time.perf_counter()
        chunks = 0
        for path in sorted(folder.rglob("*.md")):
            chunks += len(chunk_document(path.name, path.read_bytes()))
        chunk_s = time.perf_counter() - began
        print(f"baseline, read + chunk only: {chunk_s:.2f} s, {mb / chunk_s:.1f} MB/s, {chunks} chunks")

        kb = KnowledgeBase.open(workspace, data, KnowledgeSettings())
        try:
            began = time.perf_counter()
            report = await kb.sync()
            index_s = time.perf_counter() - began
            index_mb = (data / "knowledge.db").stat().st_size / 1024 / 1024
            print(f"full index build: {index_s:.2f} s, {mb / index_s:.1f} MB/s ({report.chunks} chunks, "
                  f"index file {index_mb:.1f} MB); {index_s / chunk_s:.2f}x the read + chunk baseline")

            idle = []
            for _ in range(5):
                began = time.perf_counter()
                assert not (await kb.sync()).changed
                idle.append((time.perf_counter() - began) * 1000)
            victim = next(iter(sorted((folder / "shared").glob("*.md"))))
            edits = []
            for n in range(5):
                victim.write_text(victim.read_text(encoding="utf-8") + f"\n\nEdited paragraph {n}.\n", encoding="utf-8")
                began = time.perf_counter()
                await kb.sync()
                edits.append((time.perf_counter() - began) * 1000)
            print(f"incremental sync: nothing changed {statistics.median(idle):.1f} ms median (stat of {files} files); "
                  f"one ~100 KB file edited {statistics.median(edits):.1f} ms median; full build / one edit = "
                  f"{index_s * 1000 / statistics.median(edits):.0f}x")

            def query() -> str:
                return " ".join(rng.choices(vocab[200:8000], k=rng.randint(2, 3)))

            queries = [query() for _ in range(args.queries)]
            for q in queries[:20]:  # warm the page cache
                await kb.search(q, role="research")
            results: dict[str, list[float]] = {}
            for label, role in (("as a role (shared + research)", "research"), ("as the owner", None)):
                times = []
                for q in queries:
                    began = time.perf_counter()
                    await kb.search(q, role=role, limit=5)
                    times.append((time.perf_counter() - began) * 1000)
                results[label] = times
                print(f"search {label}: p50 {percentile(times, 50):.2f} ms, p99 {percentile(times, 99):.2f} ms, "
                      f"max {max(times):.2f} ms over {len(times)} queries")

            conn = sqlite3.connect(f"file:{data / 'knowledge.db'}?mode=ro", uri=True)
            like = []
            for q in queries[:10]:
                word = q.split()[0]
                began = time.perf_counter()
                conn.execute("SELECT rowid FROM chunk_fts WHERE body LIKE ? LIMIT 5", (f"% {word} %",)).fetchall()
                conn.execute("SELECT COUNT(*) FROM chunk_fts WHERE body LIKE ?", (f"% {word} %",)).fetchone()
                like.append((time.perf_counter() - began) * 1000)
            role_p50 = percentile(results["as a role (shared + research)"], 50)
            print(f"baseline, LIKE scan of every chunk for one word (no ranking): {statistics.median(like):.1f} ms "
                  f"median over {len(like)} queries; FTS5 + BM25 search is {statistics.median(like) / role_p50:.0f}x "
                  "faster at the median")
            conn.close()
        finally:
            kb.close()


if __name__ == "__main__":
    asyncio.run(main())
