"""What the Slack tests share: a ``sabha run`` config with only the Slack channel on the fake Slack
(tests/support/fakes/slack_api.py), the places and people of the fake workspace, and a model that streams slowly.

The workspace: the owner and a friend are allowed, a stranger is not; the board channel, an advisor's channel
(finance) and DMs with the app.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections import Counter
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from aiohttp import web

from board.workspace.paths import copy_default_workspace
from tests.support.daemon import SabhaProcess
from tests.support.fakes.echo_model import EchoModel
from tests.support.fakes.slack_api import (
    SIGNING_SECRET,
    TOKEN,
    FakeSlackAPI,
    SlackEventPoster,
    event_callback,
    message_event,
)

__all__ = ["BOARD", "FINANCE", "FRIEND", "FRIEND_DM", "NAMES", "OWNER", "OWNER_DM", "STRANGER", "SlowStreamModel",
           "answered", "next_ts", "running_slack", "say", "slack_env", "slack_poster", "write_slack_config"]

OWNER, FRIEND, STRANGER = "U0OWNER", "U0FRIEND", "U0STRANGER"
BOARD, FINANCE = "C0BOARD", "C0FINANCE"
OWNER_DM, FRIEND_DM = "D0OWNER", "D0FRIEND"
NAMES = {OWNER: "Asha Owner", FRIEND: "Ravi Friend", STRANGER: "Sam Stranger"}
_ECHO = re.compile(r"ECHO [^\n]*?\b(Q\d{3})\b")
_ts = iter(range(1, 10**9))


def next_ts() -> str:
    """A fresh Slack ``ts`` (seconds.micro, as Slack writes them)."""
    return f"{int(time.time())}.{next(_ts):06d}"


def write_slack_config(root: Path, slack: FakeSlackAPI, model: EchoModel, *, allowed: Sequence[str] = (OWNER, FRIEND),
                       stream: bool = False, extra: Sequence[str] = (), access: str = "allowlist",
                       slack_extra: Sequence[str] = (), board: str = BOARD) -> Path:
    """A workspace and a sabha.yaml with only the Slack channel (Events API) on the fakes."""
    if not (root / "workspace").exists():
        copy_default_workspace(root / "workspace")
    users = ", ".join(allowed)
    lines = ["workspace: ./workspace", "data_dir: ./sessions", "server:", "  host: 127.0.0.1", "  port: 0",
             "llm:", "  model: openai:echo", "  retry: {retries: 0}", "  providers:", "    openai:",
             "      api_key: test-key", f"      base_url: {model.base_url}", f"      stream: {str(stream).lower()}",
             *extra,
             "slack:", "  bot_token: ${SLACK_BOT_TOKEN}", "  signing_secret: ${SLACK_SIGNING_SECRET}",
             f"  api_base_url: {slack.base_url}", f"  access: {access}", f"  allowed_user_ids: [{users}]",
             f"  board_channel: {board}", f"  channels: {{finance: {FINANCE}}}", f"  stream: {str(stream).lower()}",
             "  stream_edit_interval_s: 1.0", *slack_extra]
    path = root / "sabha.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def slack_env() -> dict[str, str]:
    """The secrets ``sabha run`` reads from the environment."""
    return {"SLACK_BOT_TOKEN": TOKEN, "SLACK_SIGNING_SECRET": SIGNING_SECRET}


def slack_poster(sabha: SabhaProcess) -> SlackEventPoster:
    """A poster of signed events to ``sabha``'s events path."""
    return SlackEventPoster(f"http://127.0.0.1:{sabha.port}/slack/events")


@asynccontextmanager
async def running_slack(root: Path, model: EchoModel, **config: Any) -> AsyncIterator[tuple[SabhaProcess, FakeSlackAPI,
                                                                                             SlackEventPoster]]:
    """A fake Slack and a ``sabha run`` on it (``config``: :func:`write_slack_config`'s keywords), started; both
    ended on the way out."""
    async with FakeSlackAPI(users=NAMES) as slack:
        sabha = SabhaProcess(write_slack_config(root, slack, model, **config), env=slack_env())
        try:
            await sabha.start()
            async with slack_poster(sabha) as poster:
                yield sabha, slack, poster
        finally:
            await sabha.close()


async def say(poster: SlackEventPoster, channel: str, user: str, text: str, *, thread_ts: str | None = None,
              channel_type: str = "channel") -> dict[str, Any]:
    """``user`` posts ``text`` (Slack delivers the event, retrying until acknowledged); the event body."""
    body = event_callback(message_event(channel, user, text, next_ts(), thread_ts=thread_ts,
                                        channel_type=channel_type))
    assert await poster.deliver(body), "the daemon acknowledged the event"
    return body


def answered(slack: FakeSlackAPI) -> Counter[str]:
    """How many messages (as they stand now) answer each ``Q<nnn>`` question."""
    return Counter(m for text in slack.texts() for m in _ECHO.findall(text))


class SlowStreamModel(EchoModel):
    """The echo model whose streamed answer comes a word every ``word_delay`` seconds, so a channel edits its draft
    several times while the answer is written."""

    def __init__(self, words: int = 12, word_delay: float = 0.3) -> None:
        super().__init__(latency=0.0)
        self.words = words
        self.word_delay = word_delay

    async def _stream(self, request: web.Request, body: dict[str, Any], text: str, prompt: int,
                      ) -> web.StreamResponse:
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        base = {"id": f"chatcmpl-slow{self.calls}", "object": "chat.completion.chunk", "created": int(time.time()),
                "model": body.get("model", "echo")}
        words = [*text.split(" "), *(f"word{i}" for i in range(self.words))]
        for i, word in enumerate(words):
            delta = {"content": word if not i else " " + word}
            await resp.write(f"data: {json.dumps({**base, 'choices': [{'index': 0, 'delta': delta}]})}\n\n".encode())
            await asyncio.sleep(self.word_delay)
        done = {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
        await resp.write(f"data: {json.dumps(done)}\n\n".encode())
        await resp.write(b"data: [DONE]\n\n")
        await resp.write_eof()
        return resp
