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
import pytest

from tests.support.fakes.anthropic_api import FakeAnthropic
from tests.support.fakes.openai_api import FakeOpenAI
from tests.support.llm import LookupTool, anthropic_board, envelope, openai_board

TURNS = 12


async def sdk_resend(provider: str, fake: FakeOpenAI | FakeAnthropic, body: dict[str, Any]) -> None:
    """Send ``body`` again through the SDK's ordinary path (``create(**body)``, transform included)."""
    if provider == "openai":
        assert isinstance(fake, FakeOpenAI)
        openai_client = openai.AsyncOpenAI(api_key="sk-test", base_url=fake.base_url, max_retries=0)
        await openai_client.chat.completions.create(**body)
        await openai_client.close()
    else:
        assert isinstance(fake, FakeAnthropic)
        anthropic_client = anthropic.AsyncAnthropic(api_key="ak-test", base_url=fake.url, max_retries=0)
        await anthropic_client.messages.create(**body)
        await anthropic_client.close()


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_the_body_sent_is_what_the_sdk_would_send(
    provider: str, tmp_path: Path, workspace: Path, fake_openai: FakeOpenAI, fake_anthropic: FakeAnthropic
) -> None:
    fake: FakeOpenAI | FakeAnthropic = fake_openai if provider == "openai" else fake_anthropic
    make_board = openai_board if provider == "openai" else anthropic_board
    board = await make_board(tmp_path, workspace, fake)  # type: ignore[arg-type]  # the fake matches the provider
    board.parts.tools.register(LookupTool().tool())
    try:
        for i in range(TURNS):
            fake.script_text(f"Answer {i}: runway is {14 + i} months, **mind** the `burn`.")
            await board.handle(envelope(f"@finance question {i}: what about runway? ünïcødé 🚀"))
        sent = fake.requests[-1].body
        assert len(sent["messages"]) > 6 and sent["tools"]  # a history, with tools
        if provider == "anthropic":
            assert any("cache_control" in block for block in sent["system"])  # the cache markers go as built
        fake.script_text("again")
        await sdk_resend(provider, fake, dict(sent))
        assert fake.requests[-1].body == sent
    finally:
        await board.close()
