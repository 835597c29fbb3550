"""``sabha recall`` with ``memory.embedding_model`` set, through the real CLI (a subprocess) and the fake
OpenAI-compatible embeddings endpoint: it embeds what the daemon has not yet, and a question that shares no word
with the meeting ("the workplace question") finds it by meaning, cited; a failing model leaves recall by words."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.bot.cli.test_cli import run
from tests.bot.cli.test_ratify_cli import MINE, meeting
from tests.support.fakes.embeddings_api import FakeEmbeddings
from tests.support.vectors import EMBEDDING_MODEL


async def test_sabha_recall_embeds_what_is_pending_and_finds_by_meaning(tmp_path: Path) -> None:
    result = run(["init", str(tmp_path / "proj")], cwd=tmp_path, env=MINE)
    assert result.returncode == 0, result.stderr
    home = tmp_path / "proj"
    meeting_id = await asyncio.to_thread(meeting, home, "Should we open an office in Pune?")
    async with FakeEmbeddings() as embeddings:
        with (home / "sabha.yaml").open("a") as config:
            config.write(f"\nmemory:\n  embedding_model: {EMBEDDING_MODEL}\n  embedding_base_url: "
                         f"{embeddings.base_url}\n  embedding_api_key: ${{SABHA_TEST_EMBEDDING_KEY}}\n")
        env = {**MINE, "SABHA_TEST_EMBEDDING_KEY": embeddings.key}
        found = await asyncio.to_thread(run, ["recall", "the workplace question"], home, None, env)
        assert found.returncode == 0, found.stderr
        assert f"[meeting {meeting_id}, round " in found.stdout, found.stdout  # no passage says "workplace"
        assert sum(len(r.inputs) for r in embeddings.requests) > 1  # the passages, then the question
        embeddings.fail_next(500, times=6)
        words = await asyncio.to_thread(run, ["recall", "Pune", "office"], home, None, env)
        assert words.returncode == 0, words.stderr
        assert f"[decision {meeting_id}]" in words.stdout, words.stdout
        assert embeddings.key not in words.stdout + words.stderr
