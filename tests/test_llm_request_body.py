"""The request body Sabha's providers send equals what the SDK's own path would send.

The providers hand the messages, system blocks and tool schemas to the SDKs through
``extra_body`` (:func:`board.llm.sdk_provider.as_sent`), so the SDKs' recursive request
transform (about 8 ms of event-loop time for a 40-message conversation, per call) does
not walk them. Here a real turn with a long history and tools goes through each SDK to
its local fake; the body it received is then sent again through the SDK's ordinary path
(``create(**body)``, transform included) and the two bodies must be identical.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anthropic
import openai

from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.openai_api import FakeOpenAI
from tests.llm_support import LookupTool, anthropic_board, envelope, openai_board

TURNS = 12


async def test_openai_body_is_what_the_sdk_would_send(tmp_path: Path, workspace: Path, fake_openai: FakeOpenAI) -> None:
    board = await openai_board(tmp_path, workspace, fake_openai)
    board.tools.register(LookupTool().tool())
    try:
        for i in range(TURNS):
            fake_openai.script_text(f"Answer {i}: runway is {14 + i} months, **mind** the `burn`.")
            await board.handle(envelope(f"@finance question {i}: what about runway? ünïcødé 🚀"))
        sent = fake_openai.requests[-1].body
        assert len(sent["messages"]) > 6 and sent["tools"]  # a history, with tools
        fake_openai.script_text("again")
        client = openai.AsyncOpenAI(api_key="sk-test", base_url=fake_openai.base_url, max_retries=0)
        params: dict[str, Any] = dict(sent)
        await client.chat.completions.create(**params)  # the SDK's ordinary path
        await client.close()
        assert fake_openai.requests[-1].body == sent
    finally:
        await board.close()


async def test_anthropic_body_is_what_the_sdk_would_send(
    tmp_path: Path, workspace: Path, fake_anthropic: FakeAnthropic
) -> None:
    board = await anthropic_board(tmp_path, workspace, fake_anthropic)
    board.tools.register(LookupTool().tool())
    try:
        for i in range(TURNS):
            fake_anthropic.script_text(f"Answer {i}: runway is {14 + i} months, **mind** the `burn`.")
            await board.handle(envelope(f"@finance question {i}: what about runway? ünïcødé 🚀"))
        sent = fake_anthropic.requests[-1].body
        assert len(sent["messages"]) > 6 and sent["tools"] and sent["system"]
        assert any("cache_control" in block for block in sent["system"])  # the cache markers go as built
        fake_anthropic.script_text("again")
        client = anthropic.AsyncAnthropic(api_key="ak-test", base_url=fake_anthropic.url, max_retries=0)
        params: dict[str, Any] = dict(sent)
        await client.messages.create(**params)  # the SDK's ordinary path
        await client.close()
        assert fake_anthropic.requests[-1].body == sent
    finally:
        await board.close()
