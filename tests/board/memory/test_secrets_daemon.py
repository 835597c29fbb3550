"""The memory's secret filter in a real ``sabha run`` (issue 36, item 7; round secrets46): the owner's Telegram DMs are
read by the cheap model (a fake OpenAI-compatible server whose ``memory_text`` proposes facts, as a model would write
them); blind4's six secrets that classify46's filter stored (answers to verification questions in any words, backup
numbers, an unlock pattern drawn or on a grid) are never written to ``memory_facts``, and the nine harmless facts it
refused (a postal PIN, HSN / SAC codes, a partial account number, news about a password, a place pinned on a map) are.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.board.language.test_memory_secrets import BLIND4_REFUSED, BLIND4_STORED
from tests.support.fakes.openai_api import FakeOpenAI
from tests.support.fakes.telegram_api import FakeTelegramAPI
from tests.support.standing import StandingBoard
from tests.support.telegram import OWNER

USER = f"telegram:{OWNER}"
#: What the owner says, and what the model proposes after each message (at most eight facts a message), the last a
#: plain fact that is always kept: once it is written, that message's extraction is done.
TURNS = (("I keep my bank details and phone tidy, here's what matters to me.",
          [*BLIND4_STORED[:4], *BLIND4_REFUSED[:3], ("home_city", "Mumbai")]),
         ("My phone and invoices, for the record.",
          [*BLIND4_STORED[4:], *BLIND4_REFUSED[3:6], ("employer", "Acme")]),
         ("I also pinned my favourite pizza place and my delivery area.",
          [*BLIND4_REFUSED[6:], ("diet", "vegetarian")]))
PLAIN = {facts[-1] for _text, facts in TURNS}


@pytest.fixture
async def cheap() -> AsyncIterator[FakeOpenAI]:
    async with FakeOpenAI() as server:  # extractions are answered by its memory_text
        yield server


@pytest.fixture
async def board(tmp_path: Path, fake: FakeTelegramAPI, cheap: FakeOpenAI) -> AsyncIterator[StandingBoard]:
    extra = ["llm:", "  cheap_model: openai:cheap", "  retry: {retries: 0}", "  providers:", "    openai:",
             "      api_key: test-key", f"      base_url: {cheap.base_url}", "      stream: false"]
    running = StandingBoard(tmp_path, fake, extra=extra)
    try:
        yield running
    finally:
        await running.sabha.close()


async def test_blind4s_secrets_are_never_stored_and_its_harmless_facts_are(board: StandingBoard, fake: FakeTelegramAPI,
                                                                           cheap: FakeOpenAI) -> None:
    await board.start()
    for text, facts in TURNS:
        cheap.memory_text = json.dumps({"facts": [{"key": k, "value": v, "kind": "context"} for k, v in facts]})
        fake.push_text(OWNER, OWNER, text)
        await board.wait_db('SELECT COUNT(*) FROM memory_facts WHERE "user" = ? AND key = ?', 1, (USER, facts[-1][0]))
    stored = {(r["key"], r["value"]) for r in board.query('SELECT key, value FROM memory_facts WHERE "user" = ?',
                                                          (USER,))}
    assert not stored & set(BLIND4_STORED), stored & set(BLIND4_STORED)  # no secret written
    assert stored == set(BLIND4_REFUSED) | PLAIN, set(BLIND4_REFUSED) - stored  # every harmless fact written
