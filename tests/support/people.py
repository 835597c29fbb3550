"""A real ``sabha run`` with Telegram and WhatsApp (public mode) on their fakes and the fake OpenAI
server as the model, for the linked-identity tests: send a message on either channel and wait for
its answer, and read the one-time link code out of a ``/link`` answer."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from aiohttp import ClientSession

from tests.support.daemon import SabhaProcess
from tests.support.fakes.graph_api import FakeGraphAPI
from tests.support.fakes.openai_api import FakeOpenAI
from tests.support.fakes.telegram_api import FakeTelegramAPI
from tests.support.telegram import FAST, FORUM, FRIEND, OWNER, TOKEN, eventually
from tests.support.whatsapp import APP_SECRET, NUMBER_ID, VERIFY_TOKEN, post, text_notification
from tests.support.whatsapp import FRIEND as WA_FRIEND
from tests.support.whatsapp import OWNER as WA_OWNER

MODEL = "openai:gpt-test"
CODE = re.compile(r"/link ([A-HJKMNP-Z2-9]{8})\b")


def people_config(root: Path, telegram: FakeTelegramAPI, graph: FakeGraphAPI, llm: FakeOpenAI, *,
                  extra: list[str] | None = None) -> Path:
    """A workspace and sabha.yaml: Telegram (owner and friend allowed), WhatsApp in public mode (owner
    and friend listed), the fake OpenAI server as the only model, priced so spend is counted."""
    from board.workspace.paths import copy_default_workspace

    if not (root / "workspace").exists():
        copy_default_workspace(root / "workspace")
    rate = ", ".join(f"{k}: {v}" for k, v in FAST.items())
    lines = ["workspace: ./workspace", "data_dir: ./sessions", "server:", "  host: 127.0.0.1", "  port: 0",
             "llm:", f"  model: {MODEL}", "  retry: {retries: 0}", "  providers:", "    openai:",
             "      api_key: test-key", f"      base_url: {llm.base_url}",
             "      stream: false",  # each answer one message, read as sent (streaming is not what this tests)
             "  prices:", f"    {MODEL}: {{input: 1000, output: 2000}}",
             "telegram:", "  token: ${TELEGRAM_BOT_TOKEN}", f"  api_base_url: {telegram.base_url}",
             f"  group_id: {FORUM}", f"  allowed_user_ids: [{OWNER}, {FRIEND}]", f"  rate_limit: {{{rate}}}",
             "whatsapp:", f'  phone_number_id: "{NUMBER_ID}"', "  access_token: ${WHATSAPP_ACCESS_TOKEN}",
             "  app_secret: ${WHATSAPP_APP_SECRET}", f"  verify_token: {VERIFY_TOKEN}",
             f"  graph_base_url: {graph.base_url}", "  access: public",
             f'  allowed_numbers: ["{WA_OWNER}", "{WA_FRIEND}"]', "  public_rate_per_minute: 120",
             "  public_daily_usd: 100", *(extra or [])]
    path = root / "sabha.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@dataclass
class BothChannels:
    """One daemon, both channels: :meth:`tg` and :meth:`wa` send a direct message and return its answer."""

    sabha: SabhaProcess
    telegram: FakeTelegramAPI
    graph: FakeGraphAPI
    llm: FakeOpenAI
    http: ClientSession
    sent: dict[str, int] = field(default_factory=dict)

    @classmethod
    async def start(cls, root: Path, telegram: FakeTelegramAPI, graph: FakeGraphAPI, llm: FakeOpenAI,
                    http: ClientSession, *, extra: list[str] | None = None) -> BothChannels:
        env = {"TELEGRAM_BOT_TOKEN": TOKEN, "WHATSAPP_ACCESS_TOKEN": graph.token, "WHATSAPP_APP_SECRET": APP_SECRET}
        sabha = SabhaProcess(people_config(root, telegram, graph, llm, extra=extra), env=env)
        await sabha.start()
        return cls(sabha, telegram, graph, llm, http)

    async def tg(self, user: int, text: str) -> str:
        """Send ``text`` from Telegram user ``user`` in their DM; the answer."""
        before = len(self.telegram.sent_to(user))
        self.telegram.push_text(user, user, text)
        await eventually(lambda: len(self.telegram.sent_to(user)) > before, f"an answer to {text!r} on telegram",
                         timeout=60)
        return "\n".join(m.text for m in self.telegram.sent_to(user)[before:])

    async def wa(self, user: str, text: str) -> str:
        """Send ``text`` from WhatsApp user ``user``; the answer."""
        before = len(self.graph.texts_to(user))
        url = f"http://127.0.0.1:{self.sabha.port}/whatsapp/webhook"
        assert (await post(self.http, url, text_notification(user, text)))[0] == 200
        await eventually(lambda: len(self.graph.texts_to(user)) > before, f"an answer to {text!r} on whatsapp",
                         timeout=60)
        return "\n".join(self.graph.texts_to(user)[before:])

    def request_with(self, text: str) -> str:
        """The last model request whose conversation carries ``text``, as JSON text."""
        bodies = [json.dumps(r.body, ensure_ascii=False) for r in self.llm.requests if r.body]
        found = [b for b in bodies if text in b]
        assert found, f"no model request carries {text!r}"
        return found[-1]

    async def close(self) -> None:
        await self.sabha.close()


def code_in(answer: str) -> str:
    """The one-time code a ``/link`` answer gives."""
    found = CODE.search(answer)
    assert found, f"no link code in {answer!r}"
    return found.group(1)
