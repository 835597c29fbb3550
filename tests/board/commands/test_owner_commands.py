"""Owner-only commands on a real ``sabha run`` with Telegram and WhatsApp (public mode), both on
their fakes: ``/status``, ``/cost`` and ``/souls`` show the whole board (the owner's number,
message counters, forum topics, the board's spend, soul files), so anyone but the owner gets
one line saying they are the owner's; the owner still gets the full answer. ``/help`` lists
only what the asker may use."""

from __future__ import annotations

from pathlib import Path

import pytest
from aiohttp import ClientSession

from board.commands.registry import OWNER_ONLY
from tests.support.daemon import SabhaProcess, write_config
from tests.support.fakes.graph_api import FakeGraphAPI
from tests.support.fakes.telegram_api import FakeTelegramAPI
from tests.support.telegram import FRIEND, OWNER, TOKEN, eventually
from tests.support.whatsapp import APP_SECRET, NUMBER_ID, VERIFY_TOKEN, post, text_notification
from tests.support.whatsapp import FRIEND as WA_FRIEND
from tests.support.whatsapp import OWNER as WA_OWNER
from tests.support.whatsapp import STRANGER as WA_STRANGER

OWNER_COMMANDS = ("status", "cost", "souls")
#: What the full answers show: the owner's number, counters, spend, soul files; none of it for others.
PRIVATE = (WA_OWNER, NUMBER_ID, "answered", "Model costs", "No model calls", "general: v", "Sabha 0.")


@pytest.fixture
def graph(fake_graph: FakeGraphAPI) -> FakeGraphAPI:
    return fake_graph


def _config(root: Path, telegram: FakeTelegramAPI, graph: FakeGraphAPI) -> Path:
    whatsapp = ["whatsapp:", f'  phone_number_id: "{NUMBER_ID}"', "  access_token: ${WHATSAPP_ACCESS_TOKEN}",
                "  app_secret: ${WHATSAPP_APP_SECRET}", f"  verify_token: {VERIFY_TOKEN}",
                f"  graph_base_url: {graph.base_url}", "  access: public",
                f'  allowed_numbers: ["{WA_OWNER}", "{WA_FRIEND}"]']
    return write_config(root, telegram, None, extra=whatsapp)


def _private(text: str) -> list[str]:
    return [word for word in PRIVATE if word in text]


def _one_line(text: str, command: str) -> bool:
    """The owner-only line, alone (a channel may put a speaker label on a line before it)."""
    return OWNER_ONLY.format(command=command) in text and text.strip().splitlines()[-1].strip() == \
        OWNER_ONLY.format(command=command) and len(text.strip().splitlines()) <= 2


async def test_status_cost_and_souls_answer_only_the_owner_on_telegram_and_whatsapp(
    tmp_path: Path, fake: FakeTelegramAPI, graph: FakeGraphAPI
) -> None:
    env = {"TELEGRAM_BOT_TOKEN": TOKEN, "WHATSAPP_ACCESS_TOKEN": graph.token, "WHATSAPP_APP_SECRET": APP_SECRET}
    sabha = SabhaProcess(_config(tmp_path, fake, graph), env=env)
    try:
        await sabha.start()
        url = f"http://127.0.0.1:{sabha.port}/whatsapp/webhook"
        async with ClientSession() as http:
            # Others first: an allowed Telegram member in their DM, a listed WhatsApp member, a stranger.
            for command in (*OWNER_COMMANDS, "help"):
                fake.push_text(FRIEND, FRIEND, f"/{command}")
                for user in (WA_FRIEND, WA_STRANGER):
                    assert (await post(http, url, text_notification(user, f"/{command}")))[0] == 200
            n = len(OWNER_COMMANDS) + 1
            await eventually(lambda: len(fake.sent_to(FRIEND)) == n and len(graph.texts_to(WA_FRIEND)) == n
                             and len(graph.texts_to(WA_STRANGER)) == n, "the members' and stranger's replies",
                             timeout=60)
            # Then the owner, on both channels: the full answers.
            for command in OWNER_COMMANDS:
                fake.push_text(OWNER, OWNER, f"/{command}")
                assert (await post(http, url, text_notification(WA_OWNER, f"/{command}")))[0] == 200
            await eventually(lambda: len(fake.sent_to(OWNER)) == len(OWNER_COMMANDS)
                             and len(graph.texts_to(WA_OWNER)) == len(OWNER_COMMANDS), "the owner's answers",
                             timeout=60)
    finally:
        await sabha.close()
    others = {"telegram member": [m.text for m in fake.sent_to(FRIEND)],
              "whatsapp member": graph.texts_to(WA_FRIEND), "whatsapp stranger": graph.texts_to(WA_STRANGER)}
    for who, replies in others.items():
        for command, reply in zip(OWNER_COMMANDS, replies, strict=False):
            assert _one_line(reply, command), f"{who} /{command}: {reply!r}"
            assert _private(reply) == [], f"{who} /{command} shows {_private(reply)}: {reply!r}"
        help_text = replies[-1]
        assert "/status" not in help_text and "/cost" not in help_text and "/souls" not in help_text, help_text
        assert "/meeting" in help_text and "/reset" in help_text
    owner = {"telegram": [m.text for m in fake.sent_to(OWNER)], "whatsapp": graph.texts_to(WA_OWNER)}
    for where, (status, cost, souls) in owner.items():
        assert "Sabha" in status and "up " in status and "whatsapp:" in status, f"{where}: {status!r}"
        assert WA_OWNER in status or NUMBER_ID in status, f"{where}: {status!r}"
        assert "No model calls recorded" in cost or "Model costs" in cost, f"{where}: {cost!r}"
        assert "general:" in souls and "critic:" in souls, f"{where}: {souls!r}"
