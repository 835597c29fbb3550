"""Files attached to a Discord message, on a real ``sabha run`` against the fake Discord (its CDN serving the
bytes) and the echo model: the message is stored with references to its attachments, the bytes are fetched while
the board answers and the file's text reaches the model; a file over ``media.max_bytes`` is refused before a byte
moves (its declared size) with a line in the answer saying so, and the message is answered all the same."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.support.discord import FINANCE, OWNER, places, write_config
from tests.support.discord_board import running
from tests.support.fakes.discord_interactions import FakeDiscordMore
from tests.support.fakes.echo_model import EchoModel


@pytest.fixture
async def fake() -> AsyncIterator[FakeDiscordMore]:
    async with FakeDiscordMore() as server:
        yield places(server)  # type: ignore[misc]


async def test_a_file_is_read_and_an_oversize_one_refused_with_a_line(
        tmp_path: Path, fake: FakeDiscordMore, echo_model: EchoModel) -> None:
    config = write_config(tmp_path, fake, echo_model.base_url, extra=["media:", "  max_bytes: 2048"])
    sabha = await running(config, fake)
    try:
        notes = fake.file(b"The lease on the Pune office ends in March; rent is 4000 a month.\n", "notes.txt",
                          "text/plain", FINANCE)
        q1 = fake.user_sends_files(FINANCE, OWNER, "Q200 what does this file say?", [notes], name="Ada")
        await fake.wait_for(lambda: fake.in_channel(q1["id"]), "the answer to the message with a file")
        asked = [json.dumps(b) for b in echo_model.bodies]
        assert any("The lease on the Pune office ends in March" in b and "notes.txt" in b for b in asked)
        assert fake.extras.downloads == 1

        big = fake.file(b"x" * 5000, "big.txt", "text/plain", FINANCE)
        q2 = fake.user_sends_files(FINANCE, OWNER, "Q201 and this one?", [big], name="Ada")
        await fake.wait_for(lambda: fake.in_channel(q2["id"]), "the answer to the message with a big file")
        answer = "\n".join(m.content for m in fake.in_channel(q2["id"]))
        assert "big.txt" in answer and "limit" in answer, answer  # the sender is told
        assert "Q201" in answer  # ... and the message is answered all the same
        assert fake.extras.downloads == 1  # refused on its declared size: not a byte fetched
    finally:
        await sabha.close()
    assert "Traceback" not in sabha.log, sabha.log
