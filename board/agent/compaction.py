"""Context budget and compaction: keep a session's history inside its token budget, in blocks.

A session's *history window* is what the next prompt carries: the latest
``compaction`` record's summary, the messages it kept, and every message after it.
When the window's messages exceed the role's token budget
(``llm.context.history_tokens``, per role in ``llm.context.roles``) or the
``board.history_messages`` cap, the oldest messages are summarised (a :class:`SummaryAsk`,
asked on the role's own cached prefix, or of the cheap model on its own: :mod:`board.agent.summarizer`)
into a new ``compaction`` record (summary + first kept entry) and later prompts use
summary + recent messages. The static prompt block is never touched. ``/compact`` forces it.

History only ever shrinks in blocks, never by sliding one message per turn: between two
compactions the window's start stays put, so the prompt up to the newest message is
byte-identical to the previous turn's plus the new exchange, and providers read it from
their prompt cache (see :mod:`board.workspace.prompt`). With ``llm.context.compaction``
off, the oldest messages are dropped instead of summarised: a ``compaction`` record with
``mode: drop`` (the earlier summary, if any, carried over) moves the window's start ahead
by a block, down to half the cap and budget. If a summary cannot be made (the model is
down) nothing is written and the prompt leaves out whole blocks of the oldest messages
(:func:`cut_in_blocks`, blocks counted from the window's start, so the cut stays put from
turn to turn) until the summariser answers again; no turn fails because of compaction.

Reads come from the transcript's in-memory tail, so they cost O(tail), not O(file).
"""

from __future__ import annotations

import functools
import logging
import secrets
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from board.conversation.transcripts import Transcript, utc_now
from board.llm.base import ChatMessage, Usage
from board.llm.tokens import TokenCounter
from board.workspace.quoting import FieldLimit, quote_field

__all__ = [
    "SUMMARY_HEADING",
    "CompactionResult",
    "Compactor",
    "ContextSettings",
    "HistoryWindow",
    "Summarizer",
    "Summary",
    "SummaryAsk",
    "cut_in_blocks",
    "entry_message",
    "fit_to_budget",
    "load_window",
    "new_entry_id",
    "render_for_summary",
    "summary_block_text",
]

log = logging.getLogger("sabha.compaction")

SUMMARY_HEADING = "# Earlier in this conversation (summary)"


@dataclass(frozen=True)
class ContextSettings:
    """``llm.context``: token budget of the history and how compaction behaves."""

    history_tokens: int = 3000
    keep_recent_messages: int = 6
    summary_max_tokens: int = 600
    compaction: bool = True
    roles: Mapping[str, int] = field(default_factory=dict)

    def budget_for(self, role: str) -> int:
        """The history token budget of ``role``."""
        return int(self.roles.get(role, self.history_tokens))

    @property
    def block(self) -> int:
        """How many messages the history drops at a time when it is cut without a summary."""
        return max(2, self.keep_recent_messages)

    def __hash__(self) -> int:
        return hash((self.history_tokens, self.keep_recent_messages, self.summary_max_tokens, self.compaction,
                     tuple(sorted(self.roles.items()))))


@dataclass(frozen=True)
class HistoryWindow:
    """What the next prompt may carry: the current summary and the message entries after it."""

    summary: str | None
    entries: tuple[dict[str, Any], ...]
    compaction: dict[str, Any] | None = None

    @functools.cached_property
    def _each_message(self) -> tuple[ChatMessage | None, ...]:
        # A turn asks for the messages several times (the cap, the budget, the prompt): each entry read once.
        return tuple(entry_message(e) for e in self.entries)

    def messages(self) -> list[ChatMessage]:
        """The entries as model messages (degraded placeholders left out)."""
        return [m for m in self._each_message if m is not None]

    def messages_before(self, entry_id: str) -> list[ChatMessage]:
        """The model messages of the entries before the one with id ``entry_id`` (all when it is not here)."""
        cut = next((i for i, e in enumerate(self.entries) if e.get("id") == entry_id), len(self.entries))
        return [m for m in self._each_message[:cut] if m is not None]


@dataclass(frozen=True)
class Summary:
    """What a summariser returned."""

    text: str
    model: str
    degraded: bool
    usage: Usage | None = None
    cost_usd: float | None = None


@dataclass(frozen=True)
class SummaryAsk:
    """What a summariser is asked: fold the window's first ``folded`` messages into its summary.

    ``window`` is the history window as it stands (the current summary and every message entry); its
    first ``folded`` model messages (:meth:`HistoryWindow.messages`) are the ones to summarise, the
    rest are kept as they are."""

    role: str
    agent_name: str
    window: HistoryWindow
    folded: int

    @property
    def previous(self) -> str | None:
        """The summary so far (None before the first compaction)."""
        return self.window.summary

    @property
    def conversation(self) -> str:
        """The messages to fold in, as plain lines (:func:`render_for_summary`)."""
        entries = [e for e in self.window.entries if entry_message(e) is not None]
        return render_for_summary(entries[: self.folded], self.agent_name)


#: A summariser: what to fold in -> the new summary.
Summarizer = Callable[[SummaryAsk], Awaitable[Summary]]


def entry_message(entry: Mapping[str, Any]) -> ChatMessage | None:
    """A transcript ``message`` entry as a model message, or None if it carries nothing to send."""
    role = entry.get("role")
    text = entry.get("text")
    if role not in ("user", "assistant") or not isinstance(text, str) or not text.strip():
        return None
    if entry.get("degraded"):
        return None
    if role == "user" and entry.get("is_group"):
        who = entry.get("sender_name") or entry.get("sender")
        if who:
            # several people talk in a group; the model must know who said what (the name quoted: it came from outside)
            text = f"{quote_field(str(who), FieldLimit.NAME)}: {text}"
    return ChatMessage(role=role, content=text)


def _is_message(entry: Mapping[str, Any]) -> bool:
    # a "meeting" entry (board.room.record) is the record of a board decision, read as a message from Sabha
    return entry.get("type") in ("message", "meeting") and entry.get("role") in ("user", "assistant")


def load_window(transcript: Transcript) -> HistoryWindow:
    """The history window of a transcript (see the module docstring).

    Walked from the newest event back to the last compaction (and, past it, to its first kept message):
    a turn reads its window, not the whole in-memory tail (up to 400 events) twice."""
    after: list[dict[str, Any]] = []
    events = transcript.newest(("message", "compaction", "meeting"))
    record: dict[str, Any] | None = None
    for entry in events:
        if entry.get("type") == "compaction":
            record = entry
            break
        if _is_message(entry):
            after.append(entry)
    after.reverse()
    if record is None:
        return HistoryWindow(None, tuple(after))
    kept: list[dict[str, Any]] = []
    first_kept = record.get("first_kept")
    if first_kept:
        before: list[dict[str, Any]] = []  # newest first
        for entry in events:  # on from the record, back to its first kept message
            if _is_message(entry):
                before.append(entry)
                if entry.get("id") == first_kept:
                    kept = before[::-1]
                    break
        else:  # not in the tail any more: the count it kept
            count = int(record.get("kept_messages") or 0)
            kept = before[count - 1::-1] if count > 0 else []
    summary = record.get("summary")
    return HistoryWindow(summary if isinstance(summary, str) and summary.strip() else None,
                         tuple(kept + after), record)


def summary_block_text(summary: str) -> str:
    """The system prompt block carrying a compaction summary."""
    return f"{SUMMARY_HEADING}\n{summary.strip()}\n"


def render_for_summary(entries: list[dict[str, Any]], agent_name: str) -> str:
    """Messages as plain lines for the summariser."""
    lines = []
    for entry in entries:
        message = entry_message(entry)
        if message is None:
            continue
        if message.role == "assistant":
            who = agent_name
        else:
            who = quote_field(str(entry.get("sender_name") or entry.get("sender") or "Director"), FieldLimit.NAME)
        lines.append(f"{who}: {message.content.strip()}")
    return "\n".join(lines)


@dataclass(frozen=True)
class CompactionResult:
    """A compaction that was written."""

    record: dict[str, Any]
    summarized: int
    kept: int
    tokens_before: int
    tokens_after: int


class Compactor:
    """Decides when to compact and writes compaction records; see the module docstring."""

    def __init__(self, settings: ContextSettings) -> None:
        self.settings = settings

    def history_tokens(self, window: HistoryWindow, counter: TokenCounter, *, exclude_last: int = 0) -> int:
        """Tokens of the window's summary and messages (leaving out the last ``exclude_last``)."""
        messages = window.messages()
        if exclude_last:
            messages = messages[:-exclude_last]
        summary = counter.count(summary_block_text(window.summary)) if window.summary else 0
        return summary + counter.count_messages(messages)

    def needs_compaction(self, window: HistoryWindow, counter: TokenCounter, role: str, max_messages: int,
                         *, exclude_last: int = 0) -> bool:
        """True when the window is over the role's token budget or the message cap (then :meth:`compact`
        summarises it, or with compaction off :meth:`drop` cuts it)."""
        count = len(window.messages()) - exclude_last
        if max_messages > 0 and count > max_messages:
            return True  # even when the cap is below keep_recent_messages (then half the cap is kept)
        if count <= max(1, self.settings.keep_recent_messages):
            return False
        return self.history_tokens(window, counter, exclude_last=exclude_last) > self.settings.budget_for(role)

    async def compact(
        self,
        transcript: Transcript,
        *,
        role: str,
        agent_name: str,
        counter: TokenCounter,
        summarize: Summarizer,
        force: bool = False,
        keep: int | None = None,
    ) -> CompactionResult | None:
        """Summarise the oldest messages of the window; returns None when there was nothing to do
        or the summariser failed. The caller holds the session lock."""
        window = load_window(transcript)
        entries = [e for e in window.entries if entry_message(e) is not None]
        keep = self.settings.keep_recent_messages if keep is None else keep
        keep = min(keep, len(entries))
        if not force:
            keep = max(1, keep)
        # Start the kept part on a user message so the model sees whole exchanges.
        split = len(entries) - keep
        while 0 < split < len(entries) and entries[split].get("role") != "user":
            split -= 1
        older, kept = entries[:split], entries[split:]
        if not older:
            return None
        tokens_before = self.history_tokens(window, counter)
        summary = await summarize(SummaryAsk(role, agent_name, window, len(older)))
        if summary.degraded or not summary.text.strip():
            log.warning("compaction of %s skipped: the summariser (%s) did not answer", transcript.session_id,
                        summary.model)
            return None
        first = kept[0] if kept else None
        record: dict[str, Any] = {
            "type": "compaction",
            "id": new_entry_id(),
            "ts": utc_now(),
            "summary": summary.text.strip(),
            "first_kept": first.get("id") if first else None,
            "first_kept_ts": first.get("ts") if first else None,
            "kept_messages": len(kept),
            "summarized_messages": len(older),
            "tokens_before": tokens_before,
            "token_method": counter.method,
            "model": summary.model,
            "forced": force,
        }
        if summary.usage is not None:
            record["usage"] = summary.usage.as_dict()
        if summary.cost_usd is not None:
            record["cost_usd"] = summary.cost_usd
        after = HistoryWindow(record["summary"], tuple(kept), record)
        record["tokens_after"] = self.history_tokens(after, counter)
        transcript.append(record)
        await transcript.sync()
        log.info(
            "compacted %s: %d message(s) summarised by %s, %d kept, history %d -> %d tokens (%s)",
            transcript.session_id, len(older), summary.model, len(kept), tokens_before, record["tokens_after"],
            counter.method,
        )
        return CompactionResult(record, len(older), len(kept), tokens_before, record["tokens_after"])

    async def drop(
        self,
        transcript: Transcript,
        *,
        role: str,
        counter: TokenCounter,
        max_messages: int,
        exclude_last: int = 0,
    ) -> CompactionResult | None:
        """Compaction without a summariser (``llm.context.compaction: false``): drop the oldest messages in
        one block, down to half the message cap and half the token budget, and write a ``compaction``
        record (``mode: drop``) that carries the earlier summary over. The newest ``exclude_last``
        messages (the one being answered) are never dropped. The caller holds the session lock."""
        window = load_window(transcript)
        entries = [e for e in window.entries if entry_message(e) is not None]
        older_part = entries[: len(entries) - exclude_last] if exclude_last else entries
        reserved = counter.count(summary_block_text(window.summary)) if window.summary else 0
        cap = max(1, max_messages // 2) if max_messages > 0 else len(older_part)
        budget = self.settings.budget_for(role) // 2
        split = len(older_part)
        while split > 0:  # grow the kept part back to front while it fits half the cap and budget
            candidate = older_part[split - 1 :]
            messages = [m for m in (entry_message(e) for e in candidate) if m is not None]
            if len(messages) > cap or counter.count_messages(messages) + reserved > budget:
                break
            split -= 1
        while 0 < split < len(entries) and entries[split].get("role") != "user":
            split += 1  # start the kept part on a user message so the model sees whole exchanges
        if split <= 0:
            return None
        dropped, kept = entries[:split], entries[split:]
        tokens_before = self.history_tokens(window, counter)
        first = kept[0] if kept else None
        record: dict[str, Any] = {
            "type": "compaction",
            "id": new_entry_id(),
            "ts": utc_now(),
            "mode": "drop",
            "summary": window.summary,
            "first_kept": first.get("id") if first else None,
            "first_kept_ts": first.get("ts") if first else None,
            "kept_messages": len(kept),
            "summarized_messages": 0,
            "dropped_messages": len(dropped),
            "tokens_before": tokens_before,
            "token_method": counter.method,
            "forced": False,
        }
        record["tokens_after"] = self.history_tokens(HistoryWindow(window.summary, tuple(kept), record), counter)
        transcript.append(record)
        await transcript.sync()
        log.info(
            "history of %s cut without a summary (compaction is off): %d oldest message(s) dropped, %d kept, "
            "%d -> %d tokens (%s)", transcript.session_id, len(dropped), len(kept), tokens_before,
            record["tokens_after"], counter.method,
        )
        return CompactionResult(record, 0, len(kept), tokens_before, record["tokens_after"])


def fit_to_budget(messages: list[ChatMessage], counter: TokenCounter, budget: int, *,
                  reserved: int = 0) -> list[ChatMessage]:
    """Drop the oldest messages until the rest fit ``budget`` (minus ``reserved``); keeps at least the last one.

    This slides the window one message at a time; :func:`cut_in_blocks` is the cache-friendly form."""
    kept = list(messages)
    while len(kept) > 1 and counter.count_messages(kept) + reserved > budget:
        kept.pop(0)
    return kept


def cut_in_blocks(messages: list[ChatMessage], counter: TokenCounter, *, budget: int, max_messages: int,
                  block: int, reserved: int = 0) -> list[ChatMessage]:
    """The newest messages that fit ``max_messages`` and ``budget`` (minus ``reserved``), cut only at block
    boundaries: every ``block`` messages from the first, moved on to the next user message.

    As messages are appended the cut stays where it is until the rest no longer fits, then jumps a whole
    block, so the prompt prefix changes once per block instead of on every turn. A single block too large
    for the budget on its own is trimmed message by message (:func:`fit_to_budget`) as a last resort."""

    def fits(part: list[ChatMessage]) -> bool:
        return (max_messages <= 0 or len(part) <= max_messages) and \
            counter.count_messages(part) + reserved <= budget

    if not messages or fits(messages):
        return list(messages)
    block = max(1, block)
    last = 0
    for boundary in range(block, len(messages), block):
        start = next((i for i in range(boundary, len(messages)) if messages[i].role == "user"), None)
        if start is None or start <= last:
            continue
        last = start
        if fits(messages[start:]):
            return list(messages[start:])
    tail = list(messages[last:])
    if max_messages > 0:
        tail = tail[-max_messages:]
    return fit_to_budget(tail, counter, budget, reserved=reserved)


def new_entry_id() -> str:
    """A short unique id for a transcript entry."""
    return secrets.token_hex(6)
