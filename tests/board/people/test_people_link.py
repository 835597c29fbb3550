"""Linked identities through a real ``sabha run`` with Telegram and WhatsApp on their fakes: ``/link``
on one channel gives a one-time code, ``/link CODE`` on the other makes the two accounts one person,
with one memory (a fact told on Telegram is recalled on WhatsApp) and one budget; wrong, reused and
expired codes are refused and said so; a stranger cannot link to the owner; ``/unlink`` undoes it."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import ClientSession

from board.spending.budget import SENDER_REACHED
from tests.support.daemon import DAEMON_REPO
from tests.support.fakes.graph_api import FakeGraphAPI
from tests.support.fakes.openai_api import FakeOpenAI
from tests.support.fakes.telegram_api import FakeTelegramAPI
from tests.support.people import BothChannels, code_in, people_config
from tests.support.telegram import FRIEND, OWNER
from tests.support.whatsapp import FRIEND as WA_FRIEND
from tests.support.whatsapp import OWNER as WA_OWNER
from tests.support.whatsapp import STRANGER as WA_STRANGER


@pytest.fixture
async def http() -> AsyncIterator[ClientSession]:
    async with ClientSession() as session:
        yield session


async def test_a_fact_told_on_telegram_is_recalled_on_whatsapp_once_linked(
    tmp_path: Path, fake: FakeTelegramAPI, fake_graph: FakeGraphAPI, fake_openai: FakeOpenAI, http: ClientSession
) -> None:
    both = await BothChannels.start(tmp_path, fake, fake_graph, fake_openai, http)
    try:
        asked = await both.tg(FRIEND, "/link")
        code = code_in(asked)
        assert "10 minutes" in asked, asked
        linked = await both.wa(WA_FRIEND, f"/link {code}")
        assert "linked" in linked.lower() and "telegram" in linked.lower(), linked

        fake_openai.script_tool_call("remember", {"key": "city", "value": "Pune"})
        fake_openai.script_text("Noted: Pune.")
        assert "Noted: Pune." in await both.tg(FRIEND, "I moved to Pune last month, keep that in mind.")
        await both.wa(WA_FRIEND, "Where do I live these days?")
        prompt = both.request_with("Where do I live these days?")
        assert 'city: \\"Pune\\"' in prompt, prompt  # the memory block of the WhatsApp turn
        # Not shared sessions (the default): the WhatsApp turn does not carry the Telegram conversation,
        # only a short note that quotes what was last discussed there.
        assert "on telegram" in prompt and "I moved to Pune last month" in prompt, prompt
        assert "Noted: Pune." not in prompt

        listing = await both.wa(WA_FRIEND, "/memory")
        assert "city: Pune" in listing, listing

        # /unlink: this account is on its own again; the memory stays with the person (Telegram).
        assert "Unlinked" in await both.wa(WA_FRIEND, "/unlink")
        assert "don't remember anything" in await both.wa(WA_FRIEND, "/memory")
        assert "city: Pune" in await both.tg(FRIEND, "/memory")
        assert "not linked" in await both.wa(WA_FRIEND, "/unlink")
    finally:
        await both.close()


async def test_wrong_reused_and_too_many_codes_are_refused_and_the_owner_links_only_with_the_owner(
    tmp_path: Path, fake: FakeTelegramAPI, fake_graph: FakeGraphAPI, fake_openai: FakeOpenAI, http: ClientSession
) -> None:
    both = await BothChannels.start(tmp_path, fake, fake_graph, fake_openai, http)
    try:
        # A stranger (public mode) cannot join the owner: not with the owner's code, nor by getting the owner
        # to send theirs.
        owners = code_in(await both.tg(OWNER, "/link"))
        assert "only links the owner's own accounts" in await both.wa(WA_STRANGER, f"/link {owners}")
        assert "already used" in await both.wa(WA_OWNER, f"/link {owners}")  # refused once: the code is void
        theirs = code_in(await both.wa(WA_STRANGER, "/link"))
        assert "You are the board's owner" in await both.tg(OWNER, f"/link {theirs}")
        # The owner's own accounts link with each other.
        mine = code_in(await both.tg(OWNER, "/link"))
        assert "Linked" in await both.wa(WA_OWNER, f"/link {mine}")
        assert "own code" in await both.wa(WA_OWNER, "/link " + code_in(await both.wa(WA_OWNER, "/link")))

        # Wrong and reused codes say so; a code works once.
        code = code_in(await both.tg(FRIEND, "/link"))
        wrong = "ABCDEFGH" if code != "ABCDEFGH" else "HGFEDCBA"
        assert "wrong" in await both.wa(WA_FRIEND, f"/link {wrong}")
        assert "Linked" in await both.wa(WA_FRIEND, f"/link {code.lower()}")  # case does not matter
        assert "already used" in await both.wa(WA_STRANGER, f"/link {code}")  # single use
        for _ in range(3):  # with the refused owner's code and the reuse: 5 failures in the hour ...
            assert "wrong" in await both.wa(WA_STRANGER, "/link 2345-6789")
        fresh = code_in(await both.tg(FRIEND, "/link"))
        refused = await both.wa(WA_STRANGER, f"/link {fresh}")  # ... then even a good code is refused
        assert "Too many wrong link codes" in refused and "minutes" in refused, refused
    finally:
        await both.close()
    people = await _sabha_people(tmp_path)
    assert people.count("person:") == 2, people
    assert f"telegram:{FRIEND}" in people and f"whatsapp:{WA_FRIEND}" in people and "owner" in people, people
    assert f"whatsapp:{WA_STRANGER}" not in people


async def test_an_expired_code_is_refused_and_a_linked_persons_budget_counts_both_channels(
    tmp_path: Path, fake: FakeTelegramAPI, fake_graph: FakeGraphAPI, fake_openai: FakeOpenAI, http: ClientSession
) -> None:
    config = ["people:", "  link_code_ttl_s: 1", "budget:", "  per_sender_daily_usd: 1.0"]
    # The owner links the friend's two accounts before the daemon starts: `sabha people link`.
    people_config(tmp_path, fake, fake_graph, fake_openai, extra=config)
    out = await _sabha(tmp_path, "people", "link", f"telegram:{FRIEND}", f"whatsapp:{WA_FRIEND}")
    assert "linked" in out and "person:1" in out, out
    both = await BothChannels.start(tmp_path, fake, fake_graph, fake_openai, http, extra=config)
    try:
        code = code_in(await both.tg(FRIEND, "/link"))
        await asyncio.sleep(1.2)  # past link_code_ttl_s
        expired = await both.wa(WA_STRANGER, f"/link {code}")
        assert "expired" in expired and "1 second" in expired, expired

        # One budget: what the friend spent on Telegram (about $2.5 at these prices) counts on WhatsApp, where
        # this account has spent nothing (there is no daily limit for everyone: only the per-sender one).
        assert fake_openai.DEFAULT_TEXT in await both.tg(FRIEND, "What is a good runway?")
        assert SENDER_REACHED in await both.wa(WA_FRIEND, "And a good burn rate?")
    finally:
        await both.close()
    out = await _sabha(tmp_path, "people", "unlink", f"whatsapp:{WA_FRIEND}")
    assert "unlinked" in out, out
    left = await _sabha(tmp_path, "people")  # the person keeps its memory, on the account still in it
    assert f"telegram:{FRIEND}" in left and "whatsapp:" not in left, left


async def _sabha(root: Path, *args: str) -> str:
    """Run the real CLI in ``root``; its output (stdout and stderr)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SABHA_")}
    env.update(PYTHONPATH=str(DAEMON_REPO), TELEGRAM_BOT_TOKEN="x", WHATSAPP_ACCESS_TOKEN="x",
               WHATSAPP_APP_SECRET="x")
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.cli", *args, "--config", str(root / "sabha.yaml"), cwd=str(root), env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    out, _ = await asyncio.wait_for(proc.communicate(), 60)
    return out.decode()


async def _sabha_people(root: Path) -> str:
    return await _sabha(root, "people")
