"""The chat turn's own stages around its exchange, in the order :meth:`AgentRunner.turn` runs them.

open_transcript -> :func:`record_user` -> compact_history -> build_prompt -> exchange ->
:func:`record_answer` -> sync -> :func:`observe` -> :func:`tell_listeners` -> reply. This module owns the stages that
touch only the transcript, the log and the observers (the runner owns the ones that need its
souls, prompts and compactor): what a user's message and an answer look like as transcript
entries, a resumed message found again, and the turn's log line and observer fields.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from board.agent.compaction import new_entry_id
from board.agent.exchange import ExchangeOutcome
from board.conversation.transcripts import Transcript, utc_now
from board.envelope import Envelope
from board.workspace.souls import AgentProfile

__all__ = ["TurnHeard", "TurnListener", "TurnObserver", "answer_entry", "earlier_entry", "observe", "record_answer",
           "record_user", "tell_listeners", "user_entry"]

log = logging.getLogger("sabha.agent")

#: Told of every finished turn (the fields of its log line); the daemon's metrics plug in here.
TurnObserver = Callable[[Mapping[str, Any]], None]


@dataclass(frozen=True)
class TurnHeard:
    """A finished chat turn as a listener sees it: what the person sent (``text``, as the turn read it,
    attachments laid out after it), its transcript entry, the role and session that answered."""

    envelope: Envelope
    role: str
    session_key: str
    entry_id: str
    text: str


#: Told of every finished turn with what was said (user memory listens here). It must return at
#: once: anything slow is its own background task, never the reply's.
TurnListener = Callable[[TurnHeard], None]


def user_entry(envelope: Envelope, text: str) -> dict[str, Any]:
    """The transcript entry of a user's message."""
    entry: dict[str, Any] = {
        "type": "message",
        "id": new_entry_id(),
        "ts": utc_now(),
        "role": "user",
        "text": text,
        "sender": envelope.sender,
        "channel": envelope.channel,
    }
    if envelope.sender_name:
        entry["sender_name"] = envelope.sender_name
    if envelope.message_id is not None:
        entry["message_id"] = envelope.message_id
    if envelope.is_group:
        entry["is_group"] = True  # history shows who said what
    if envelope.attachments:  # what came with it (its text, read, is part of ``text``)
        entry["attachments"] = [{k: v for k, v in (("kind", a.kind.value), ("name", a.name), ("mime", a.mime),
                                                   ("size", a.size), ("blob", a.blob), ("problem", a.problem))
                                 if v is not None} for a in envelope.attachments]
    return entry


def earlier_entry(transcript: Transcript, envelope: Envelope) -> dict[str, Any] | None:
    """The user entry ``envelope``'s message already left in the transcript's recent tail (same channel
    and message id), or None. Reads the in-memory tail only."""
    if envelope.message_id is None:
        return None
    wanted = envelope.message_id
    for entry in transcript.newest(("message",)):  # the message id first: most entries stop there
        if (entry.get("message_id") == wanted and entry.get("role") == "user"
                and entry.get("channel") == envelope.channel and isinstance(entry.get("id"), str)):
            return entry
    return None


def record_user(transcript: Transcript, envelope: Envelope, text: str, *, role: str, key: str) -> dict[str, Any]:
    """Append the user's message before any model is called (a crash mid-turn never loses it); a
    message the transcript already holds (a turn a crash cut short, resumed) is not written again."""
    entry = earlier_entry(transcript, envelope)
    if entry is not None:
        log.info("role %s key=%s: message %s is already in the transcript; answering it again without a copy",
                 role, key, envelope.message_id)
        return entry
    entry = user_entry(envelope, text)
    transcript.append(entry)
    return entry


def answer_entry(profile: AgentProfile, outcome: ExchangeOutcome) -> dict[str, Any]:
    """The transcript entry of an answer: its soul version, model, usage, cost and latency."""
    entry: dict[str, Any] = {
        "type": "message",
        "id": new_entry_id(),
        "ts": utc_now(),
        "role": "assistant",
        "agent": profile.role,
        "text": outcome.text,
        "soul_version": profile.soul.version,
        "model": outcome.model,
        "latency_ms": outcome.latency_ms,
        "llm_calls": outcome.llm_calls,
    }
    if outcome.llm_calls:
        entry["usage"] = outcome.usage.as_dict()
        entry["cost_usd"] = outcome.cost_usd
    if outcome.tool_events:
        entry["tool_calls"] = len(outcome.tool_events)
    if outcome.hit_tool_cap:
        entry["tool_cap"] = True
    if outcome.thinking:  # only when the owner keeps it (llm.keep_thinking); never sent back to a model
        entry["thinking"] = outcome.thinking
    if outcome.degraded:
        entry["degraded"] = True
        entry["error"] = outcome.error
    return entry


async def record_answer(transcript: Transcript, profile: AgentProfile, outcome: ExchangeOutcome) -> None:
    """Append the answer and fsync the transcript (the turn is durable once this returns)."""
    transcript.append(answer_entry(profile, outcome))
    await transcript.sync()


def observe(observers: Iterable[TurnObserver], envelope: Envelope, key: str, profile: AgentProfile,
            outcome: ExchangeOutcome) -> None:
    """Log the turn's line and tell each observer its fields (a failing observer is logged, not fatal)."""
    usage = outcome.usage
    fields: dict[str, Any] = {
        "event": "turn", "channel": envelope.channel, "session_key": key, "role": profile.role,
        "soul": profile.soul.version, "model": outcome.model, "llm_calls": outcome.llm_calls,
        "tool_calls": len(outcome.tool_events), "latency_ms": round(outcome.latency_ms, 1),
        "input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens,
        "cache_read_tokens": usage.cache_read_tokens, "cache_write_tokens": usage.cache_write_tokens,
        "cost_usd": outcome.cost_usd, "degraded": outcome.degraded,
    }
    log.info(
        "turn channel=%s role=%s key=%s soul=%s model=%s calls=%d tools=%d latency_ms=%.1f tokens=%d/%d "
        "cached=%d written=%d cost=%s%s",
        envelope.channel, profile.role, key, profile.soul.version, outcome.model, outcome.llm_calls,
        len(outcome.tool_events), outcome.latency_ms, usage.input_tokens, usage.output_tokens,
        usage.cache_read_tokens, usage.cache_write_tokens, outcome.cost_usd,
        " degraded" if outcome.degraded else "", extra=fields,
    )
    for observer in list(observers):
        try:
            observer(fields)
        except Exception:
            log.exception("turn observer %r failed", observer)


def tell_listeners(listeners: Iterable[TurnListener], heard: TurnHeard) -> None:
    """Tell each listener the turn finished (a failing one is logged, not fatal)."""
    for listener in list(listeners):
        try:
            listener(heard)
        except Exception:
            log.exception("turn listener %r failed", listener)
