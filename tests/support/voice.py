"""A channel in miniature for the voice tests and benchmark: a real intake and a real board (the
official OpenAI SDK against the fake OpenAI server for transcription, speech and chat), with a
courier that serves a note's bytes the way a channel's ``fetch_media`` does and records what it
delivers."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from board.app import Board
from board.envelope import Envelope, Reply
from board.media.attachment import Attachment, MediaKind, MediaRef
from board.media.blobs import BlobSink
from bot.app import all_migrations, build_providers
from bot.config import LoadedConfig
from bot.config.load import parse_config
from bot.daemon import channel_parts
from bot.intake.courier import Admission, ChannelTexts
from bot.intake.delivery import SendProgress
from bot.intake.inbox import Arrival
from bot.intake.intake import Intake, IntakeHub
from tests.support.fakes.openai_api import FakeOpenAI

__all__ = ["CHANNEL", "NoteCourier", "Rig", "media_yaml", "rig"]

CHANNEL = "voicetest"


@dataclass
class NoteCourier:
    """A channel in miniature: everyone admitted, one lane per chat, files served from memory."""

    name: str = CHANNEL
    texts: ChannelTexts = field(default_factory=ChannelTexts)
    files: dict[str, bytes] = field(default_factory=dict)
    delivered: list[Reply] = field(default_factory=list)
    fetched: int = 0
    _event: asyncio.Event = field(default_factory=asyncio.Event)

    def admit(self, envelope: Envelope) -> Admission:
        return Admission(True)

    def conversation(self, envelope: Envelope) -> str:
        return envelope.chat_id

    @asynccontextmanager
    async def typing(self, envelope: Envelope) -> AsyncIterator[None]:
        yield

    async def deliver(self, reply: Reply, progress: SendProgress) -> None:
        await progress.leaving()
        progress.posted += 1
        self.delivered.append(reply)
        self._event.set()

    async def fetch_media(self, attachment: Attachment, sink: BlobSink) -> None:
        assert attachment.source is not None
        self.fetched += 1
        data = self.files[attachment.source.id]
        sink.expect(size=len(data), mime=attachment.mime)
        for start in range(0, len(data), 1024):
            sink.write(data[start:start + 1024])

    async def reply_to(self, message_id: str, timeout: float = 60.0) -> Reply:
        """The reply to ``message_id``, once delivered."""

        async def wait() -> Reply:
            while True:
                for reply in self.delivered:
                    if reply.reply_to == message_id:
                        return reply
                self._event.clear()
                await self._event.wait()

        return await asyncio.wait_for(wait(), timeout)


@dataclass
class Rig:
    board: Board
    intake: Intake
    courier: NoteCourier
    fake: FakeOpenAI
    hub: IntakeHub
    sent: int = 0

    async def send(self, text: str = "", *, note: bytes | None = None, duration: float | None = None,
                   sender: str = "owner", public: bool = False, kind: MediaKind = MediaKind.VOICE,
                   message_id: str | None = None) -> str:
        """``sender`` sends ``text`` (with a voice note of ``note``'s bytes); returns the message id."""
        self.sent += 1
        mid = message_id or f"m{self.sent}"
        attachments: tuple[Attachment, ...] = ()
        if note is not None:
            file_id = f"file-{mid}"
            self.courier.files[file_id] = note
            attachments = (Attachment(kind=kind, mime="audio/ogg; codecs=opus", size=len(note), duration_s=duration,
                                      source=MediaRef(channel=CHANNEL, id=file_id)),)
        envelope = Envelope(channel=CHANNEL, text=text, sender=sender, chat_id=f"chat-{sender}", message_id=mid,
                            is_owner=sender == "owner", is_public=public, attachments=attachments)
        await self.intake.receive([Arrival(envelope, envelope.chat_id)])
        return mid

    async def ask(self, text: str = "", **kw: Any) -> Reply:
        """:meth:`send`, then the reply delivered."""
        return await self.courier.reply_to(await self.send(text, **kw))

    def chat_prompts(self) -> list[str]:
        """The last user message of every chat request the fake received."""
        out = []
        for request in self.fake.requests:
            messages = (request.body or {}).get("messages") or []
            users = [m for m in messages if m.get("role") == "user"]
            content = users[-1]["content"] if users else ""
            out.append(content if isinstance(content, str) else json.dumps(content))
        return out

    async def ledger_rows(self, purpose: str) -> list[dict[str, Any]]:
        rows = await self.board.parts.db.fetchall(
            "SELECT model, outcome, cost_usd, sender, scope, tags, attempt FROM llm_calls WHERE purpose = ? "
            "ORDER BY id", (purpose,))
        return [dict(zip(("model", "outcome", "cost_usd", "sender", "scope", "tags", "attempt"), tuple(r),
                         strict=True)) for r in rows]


def media_yaml(**media: Any) -> str:
    lines = [f"  {k}: {json.dumps(v)}" for k, v in media.items()]
    return "media:\n" + "\n".join(lines) + "\n" if lines else ""


@asynccontextmanager
async def rig(tmp_path: Path, workspace: Path, fake: FakeOpenAI, *, courier: NoteCourier | None = None,
              resume: bool = False, extra_yaml: str = "", **media: Any) -> AsyncIterator[Rig]:
    """The board (chat on the fake's gpt-4o-mini, ``media`` settings, then ``extra_yaml``: more sections)
    behind a real intake; data under ``tmp_path``/sessions (the same path again: a restart, with ``resume``
    what was left)."""
    yaml_text = f"""
llm:
  model: openai:gpt-4o-mini
  retry: {{retries: 1, backoff_s: 0.01, backoff_max_s: 0.05, retry_after_max_s: 1}}
  timeout_s: 10
  providers:
    openai: {{base_url: "{fake.base_url}", api_key: "sk-test"}}
{media_yaml(**media)}
{extra_yaml}"""
    config = parse_config(yaml_text, source="test.yaml", env={})
    loaded = LoadedConfig(config=config, source=None, base_dir=tmp_path)
    settings = replace(loaded.board_settings(), workspace=workspace, data_dir=tmp_path / "sessions")
    board = await Board.open(settings, build_providers(loaded, env={}), migrations=all_migrations())
    hub = IntakeHub()
    courier = courier or NoteCourier()
    intake = hub.intake(channel_parts(board).intake, courier)
    try:
        if resume:
            await intake.resume()
        yield Rig(board, intake, courier, fake, hub)
    finally:
        await hub.drain(5)
        await board.close()
