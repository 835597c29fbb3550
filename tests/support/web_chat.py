"""The web chat in tests: a guard of the tests' own, a channel served on 127.0.0.1, and a "browser"
that follows a conversation over SSE (reconnecting with ``Last-Event-ID`` as EventSource does) and
shows what a page would: each outbox row once, the draft of an answer being written, the draft
replaced by its reply."""

from __future__ import annotations

import asyncio
import contextlib
import json
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from aiohttp import ClientError, ClientSession, ClientTimeout, web

from board.app import Board
from bot.channels.web.channel import WebChatChannel
from bot.channels.web.config import WebChatSection
from bot.daemon import channel_parts
from bot.intake.config import InboxSection
from bot.intake.intake import IntakeHub
from bot.web.auth import CSRF_HEADER
from tests.support.fakes.echo_model import EchoModel
from tests.support.fakes.local_server import serve_locally
from tests.support.fakes.openai_api import FakeOpenAI

__all__ = ["COOKIE", "CSRF", "ChatBrowser", "ServedChat", "TestGuard", "new_id", "post_message", "served_chat",
           "streaming_board", "write_chat_config"]

COOKIE = "sabha_chat_test"
SECRET = "owner-secret-for-tests"
CSRF = "csrf-for-tests"


class TestGuard:
    """The owner is whoever has cookie :data:`COOKIE` = :data:`SECRET`; the CSRF token is :data:`CSRF`."""

    __test__ = False

    def __init__(self) -> None:
        self.signed_out = False  # True: the owner signed out (every request is refused from now on)

    async def refusal(self, request: web.Request) -> web.StreamResponse | None:
        if request.cookies.get(COOKIE) == SECRET and not self.signed_out:
            return None
        return web.Response(status=401, text="log in first")

    async def signed_in(self, request: web.Request) -> bool:
        return await self.refusal(request) is None

    def csrf_token(self, request: web.Request) -> str:
        return CSRF

    def csrf_ok(self, request: web.Request, token: str | None) -> bool:
        return token == CSRF


async def streaming_board(tmp_path: Path, workspace: Path, fake: FakeOpenAI) -> Board:
    """A board on the fake OpenAI that streams its answers, with every channel's tables."""
    from bot.app import all_migrations, build_providers
    from bot.config import LoadedConfig
    from bot.config.load import parse_config

    text = (f"llm:\n  model: openai:gpt-4o-mini\n  retry: {{retries: 0}}\n  providers:\n"
            f'    openai: {{base_url: "{fake.base_url}", api_key: "sk-test", stream: true}}\n')
    loaded = LoadedConfig(config=parse_config(text, source="test.yaml", env={}), source=None, base_dir=tmp_path)
    settings = replace(loaded.board_settings(), workspace=workspace, data_dir=tmp_path / "sessions")
    return await Board.open(settings, build_providers(loaded, env={}), migrations=all_migrations())


def write_chat_config(root: Path, model: EchoModel | FakeOpenAI, *, stream: bool = False) -> Path:
    """A workspace and a sabha.yaml for ``sabha run`` with the web pages (and so the chat) and no other
    channel, on ``model`` (an OpenAI-compatible fake; ``stream``: its answers stream, else they arrive whole: said
    explicitly, streaming being the default)."""
    from board.workspace.paths import copy_default_workspace

    if not (root / "workspace").exists():
        copy_default_workspace(root / "workspace")
    name = "echo" if isinstance(model, EchoModel) else "gpt-4o-mini"
    lines = ["workspace: ./workspace", "data_dir: ./sessions", "server:", "  host: 127.0.0.1", "  port: 0",
             "llm:", f"  model: openai:{name}", "  retry: {retries: 0}", "  providers:", "    openai:",
             "      api_key: test-key", f"      base_url: {model.base_url}",
             f"      stream: {'true' if stream else 'false'}", "web:", "  enabled: true"]
    path = root / "sabha.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def new_id() -> str:
    return f"c-{uuid.uuid4().hex}"


async def post_message(http: ClientSession, base: str, advisor: str, text: str, client_id: str | None = None, *,
                       csrf: str | None = CSRF, owner: bool = True,
                       cookie: str | None = None) -> tuple[int, dict[str, Any]]:
    """POST ``text`` to ``advisor``'s chat at ``base`` (http://host:port) as the page does; the status and
    the JSON body. ``cookie``: the login's (default: :class:`TestGuard`'s); ``owner=False``: none."""
    headers = {CSRF_HEADER: csrf} if csrf is not None else {}
    cookies = {"Cookie": cookie or f"{COOKIE}={SECRET}"} if owner else {}
    async with http.post(f"{base}/ui/chat/{advisor}/messages", headers={**headers, **cookies},
                         json={"text": text, "client_id": client_id or new_id()}) as resp:
        try:
            body = await resp.json(content_type=None)
        except ValueError:
            body = {"error": await resp.text()}
        return resp.status, body


@dataclass
class ChatBrowser:
    """One page following ``advisor``'s conversation; ``base()`` is where the server is now."""

    base: Callable[[], str]
    advisor: str
    cookie: str = f"{COOKIE}={SECRET}"
    entries: dict[int, dict[str, Any]] = field(default_factory=dict)  # seq -> row
    order: list[str] = field(default_factory=list)  # what was shown, in order: "<seq>", or "h:<id>" (history)
    history: dict[str, dict[str, Any]] = field(default_factory=dict)  # messages written elsewhere, by id
    drafts: dict[str, str] = field(default_factory=dict)  # question -> text shown
    finished: set[str] = field(default_factory=set)
    repeats: list[int] = field(default_factory=list)  # seqs received twice (must stay empty)
    draft_texts: list[str] = field(default_factory=list)  # every distinct partial text shown, in order
    connections: int = 0
    ended: int = 0  # streams the server ended
    refused: int = 0  # connections refused (not 200)
    last_id: int = 0
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    _task: asyncio.Task[None] | None = None

    def start(self) -> ChatBrowser:
        self._task = asyncio.create_task(self._run(), name=f"browser {self.advisor}")
        return self

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _run(self) -> None:
        async with ClientSession(timeout=ClientTimeout(total=None, sock_connect=2)) as http:
            while True:
                headers = {"Cookie": self.cookie, "Last-Event-ID": str(self.last_id)}
                try:
                    async with http.get(f"{self.base()}/ui/chat/{self.advisor}/events", headers=headers) as resp:
                        if resp.status == 200:
                            self.connections += 1
                            self.drafts.clear()  # as the page does on (re)connecting: current drafts follow
                            await self._read(resp.content)
                            self.ended += 1
                        else:
                            self.refused += 1
                        self.changed.set()
                except (TimeoutError, ClientError, OSError, ValueError):
                    pass
                await asyncio.sleep(0.05)  # EventSource's retry (the stream says 1000 ms; tests are quicker)

    async def _read(self, content: Any) -> None:
        event, data, seq = "message", "", None
        async for raw in content:
            line = raw.decode().rstrip("\n").rstrip("\r")
            if not line:
                if data:
                    self._on(event, json.loads(data), seq)
                event, data, seq = "message", "", None
            elif line.startswith("event:"):
                event = line[6:].strip()
            elif line.startswith("data:"):
                data += line[5:].strip()
            elif line.startswith("id:"):
                seq = int(line[3:].strip())

    def _on(self, event: str, data: dict[str, Any], seq: int | None) -> None:
        if event == "entry" and seq is not None:
            self.last_id = seq
            if seq in self.entries:
                self.repeats.append(seq)
            self.entries[seq] = data
            self.order.append(str(seq))
            if data.get("reply_to") and data["kind"] != "question":
                self.finished.add(data["reply_to"])
                self.drafts.pop(data["reply_to"], None)
        elif event in ("draft", "delta") and data["reply_to"] not in self.finished:
            text = data["text"] if event == "draft" else self.drafts.get(data["reply_to"], "") + data["text"]
            self.drafts[data["reply_to"]] = text
            if text and (not self.draft_texts or self.draft_texts[-1] != text):
                self.draft_texts.append(text)
        elif event == "history" and data["id"] not in self.history:
            self.history[data["id"]] = data
            self.order.append(f"h:{data['id']}")
        elif event == "draft_end":
            self.drafts.pop(data["reply_to"], None)
        self.changed.set()

    def timeline(self) -> list[tuple[str, str]]:
        """(kind, text) of each row and message of the history, in the order the page shows them."""
        return [(self.history[k[2:]]["kind"], self.history[k[2:]]["text"]) if k.startswith("h:")
                else (self.entries[int(k)]["kind"], self.entries[int(k)]["text"]) for k in self.order]

    def questions(self) -> list[str]:
        return [e["text"] for _, e in sorted(self.entries.items()) if e["kind"] == "question"]

    def replies(self) -> list[str]:
        return [e["text"] for _, e in sorted(self.entries.items()) if e["kind"] != "question"]

    def shown(self) -> list[str]:
        """Every text the page shows: rows in order, then drafts."""
        return [e["text"] for _, e in sorted(self.entries.items())] + list(self.drafts.values())

    async def wait(self, predicate: Callable[[ChatBrowser], bool], what: str, timeout: float = 60.0) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not predicate(self):
            left = deadline - loop.time()
            if left <= 0:
                raise AssertionError(f"timed out waiting for {what}; the page shows {self.shown()!r}")
            self.changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.changed.wait(), min(left, 0.2))


@dataclass
class ServedChat:
    """A :class:`WebChatChannel` on a real aiohttp server on 127.0.0.1."""

    board: Board
    settings: WebChatSection = field(default_factory=WebChatSection)
    inbox: InboxSection | None = None  # the intake's settings (default: the config's defaults)
    channel: WebChatChannel | None = None
    guard: TestGuard | None = None
    runner: web.AppRunner | None = None
    url: str = ""

    async def start(self) -> WebChatChannel:
        hub = IntakeHub(self.inbox) if self.inbox is not None else None
        self.guard = TestGuard()
        self.channel = WebChatChannel(channel_parts(self.board), self.settings, hub=hub, guard=self.guard)
        app = web.Application()
        app.add_routes(self.channel.routes())
        self.runner, port = await serve_locally(app, shutdown_timeout=2.0)
        self.url = f"http://127.0.0.1:{port}"
        await self.channel.start()
        return self.channel

    async def stop(self, grace: float = 5.0) -> None:
        if self.channel is not None:
            await self.channel.stop(grace)
            self.channel = None
        if self.runner is not None:
            await self.runner.cleanup()
            self.runner = None


@contextlib.asynccontextmanager
async def served_chat(board: Board, **settings: Any) -> AsyncIterator[ServedChat]:
    served = ServedChat(board, WebChatSection(**settings))
    await served.start()
    try:
        yield served
    finally:
        await served.stop()
