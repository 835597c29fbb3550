"""One agent turn, end to end: soul -> prompt -> model -> transcript -> reply.

The user's message is written to the transcript (and flushed) before the model is
called, so a crash mid-turn never loses what the user said; the answer is appended
and the file fsynced when the turn ends. Every assistant entry records the soul
version, model, usage and latency it came from.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from board.envelope import Envelope, Reply
from board.llm.base import ChatMessage, LLMError, LLMRequest, Persona
from board.llm.registry import ProviderRegistry, UnknownModelError
from board.prompt import PromptBuilder, TurnContext
from board.sessions import Sessions
from board.souls import AgentProfile, SoulStore
from board.transcripts import Transcript, utc_now

log = logging.getLogger("sabha.agent")


@dataclass(frozen=True)
class AgentSettings:
    """Knobs of a turn that come from config."""

    default_model: str = "offline"
    history_messages: int = 20
    max_tokens: int = 1024


def place_of(envelope: Envelope) -> str:
    """A short description of where the message was posted, for the prompt."""
    if envelope.is_group:
        return f"group {envelope.chat_id}" + (f", topic {envelope.thread_id}" if envelope.thread_id else "")
    return "direct chat"


def history_messages(transcript: Transcript, limit: int) -> list[ChatMessage]:
    """The recent user/assistant messages of a session as model messages."""
    messages = []
    for entry in transcript.recent(limit):
        role = entry.get("role")
        text = entry.get("text")
        if role in ("user", "assistant") and isinstance(text, str) and text:
            messages.append(ChatMessage(role=role, content=text))
    return messages


class AgentRunner:
    """Runs turns for any role; one instance serves the whole board."""

    def __init__(
        self,
        souls: SoulStore,
        prompts: PromptBuilder,
        sessions: Sessions,
        providers: ProviderRegistry,
        settings: AgentSettings,
    ) -> None:
        self.souls = souls
        self.prompts = prompts
        self.sessions = sessions
        self.providers = providers
        self.settings = settings

    def model_for(self, profile: AgentProfile) -> str:
        """The model a role uses: config/soul override, else the default."""
        return profile.model or self.settings.default_model

    async def turn(self, role: str, key: str, envelope: Envelope, text: str) -> Reply:
        """Answer ``text`` as ``role`` in session ``key``. The caller holds the key's lock."""
        profile = self.souls.profile(role)
        transcript = await self.sessions.open(key, role)
        user_entry: dict[str, Any] = {
            "type": "message",
            "ts": utc_now(),
            "role": "user",
            "text": text,
            "sender": envelope.sender,
            "channel": envelope.channel,
        }
        if envelope.sender_name:
            user_entry["sender_name"] = envelope.sender_name
        if envelope.message_id is not None:
            user_entry["message_id"] = envelope.message_id
        history = history_messages(transcript, self.settings.history_messages)
        transcript.append(user_entry)

        colleagues = self.souls.profiles()
        context = TurnContext(
            channel=envelope.channel,
            place=place_of(envelope),
            sender=envelope.sender_name or envelope.sender,
            now=datetime.now(UTC),
        )
        prompt = self.prompts.build(profile, colleagues, self.souls.roster.name, context, history, text)
        model = self.model_for(profile)
        request = LLMRequest(
            model=model,
            system=prompt.blocks,
            messages=prompt.messages,
            persona=Persona(role=role, name=profile.name, emoji=profile.emoji, soul=profile.soul.text),
            max_tokens=self.settings.max_tokens,
            metadata={"session_key": key, "soul_version": profile.soul.version},
        )
        started = time.perf_counter()
        degraded = False
        try:
            provider = self.providers.resolve(model)
            response = await provider.complete(request)
            answer, usage, used_model = response.text.strip(), response.usage, response.model
            if not answer:
                answer = "(I have nothing to add to that.)"
        except (LLMError, UnknownModelError) as exc:
            log.error("turn %s/%s: model %s failed: %s", role, key, model, exc)
            degraded = True
            answer = "I'm having trouble thinking right now; try again in a minute."
            usage, used_model = None, model
        latency_ms = round((time.perf_counter() - started) * 1000, 2)

        entry: dict[str, Any] = {
            "type": "message",
            "ts": utc_now(),
            "role": "assistant",
            "agent": role,
            "text": answer,
            "soul_version": profile.soul.version,
            "model": used_model,
            "latency_ms": latency_ms,
        }
        if usage is not None:
            entry["usage"] = {
                "input_tokens": usage.input_tokens,
                "output_tokens": usage.output_tokens,
                "cache_read_tokens": usage.cache_read_tokens,
                "cache_write_tokens": usage.cache_write_tokens,
            }
        if degraded:
            entry["degraded"] = True
        transcript.append(entry)
        await transcript.sync()
        log.info(
            "turn role=%s key=%s soul=%s model=%s latency_ms=%.1f%s",
            role, key, profile.soul.version, used_model, latency_ms, " degraded" if degraded else "",
        )
        return Reply.to(
            envelope,
            role=role,
            name=profile.name,
            emoji=profile.emoji,
            text=answer,
            session_key=key,
            degraded=degraded,
        )
