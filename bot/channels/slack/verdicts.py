"""A decision's Slack buttons once it is ruled on, wherever it was ruled.

The messages that carry a decision's Ratify / Veto / Revisit buttons (a meeting's decision, a reply with them)
are recorded as they are posted (:meth:`SlackVerdicts.posted`, table ``slack_button_posts``, migration 1125:
the channel, the message's ts and its text). When the decision is ruled on, each such message is changed
(``chat.update``) to its text and a line saying the verdict (``✅ Ratified by Asha``) instead of the buttons, once:
the row records the verdict it shows. The line a press puts there first (who pressed what: :meth:`pressed`)
never replaces a verdict already shown.

A ruling in this process is heard at once (:meth:`SlackVerdicts.changed`, a
:class:`board.decisions.ratify.DecisionBook` listener); one made by another process (``sabha decisions ratify``,
another replica, Telegram or the web served elsewhere) is found by a look every :data:`SWEEP_S` seconds at the
recorded messages still showing buttons (:meth:`SlackVerdicts.sweep`; the first look finds a ruling made while
Sabha was down). A message whose update failed keeps its buttons and is tried again at the next look; a press on it is
answered by its command ("already ratified").
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from board.commands.decisions import settled_buttons
from board.conversation.transcripts import utc_now
from board.decisions.ratify import DecisionBook, DecisionChange, DecisionRecord, Outcome, Verdict
from board.storage import Database
from bot.channels.slack.blocks import text_sections
from bot.intake.delivery import SendFailed

if TYPE_CHECKING:
    from bot.channels.slack.outbound import SlackWeb

__all__ = ["SWEEP_S", "SlackVerdicts", "decision_of", "verdict_blocks"]

log = logging.getLogger("sabha.slack")

#: Seconds between looks for rulings made by another process.
SWEEP_S = 5.0
_RULING = re.compile(r"^/(?:ratify|veto|revisit)\s+(\S+)")


def decision_of(blocks: Sequence[dict[str, Any]] | None) -> str | None:
    """The decision (meeting id) whose Ratify / Veto / Revisit buttons are in ``blocks``, or None."""
    for block in blocks or ():
        if block.get("type") != "actions":
            continue
        for element in block.get("elements") or ():
            found = _RULING.match(str(element.get("value") or ""))
            if found:
                return found.group(1)
    return None


def verdict_blocks(text: str, record: DecisionRecord) -> list[dict[str, Any]]:
    """The message ``text`` with a line saying ``record``'s verdict where its buttons were."""
    label = settled_buttons(record)[0].label
    who = record.ruled_by_name or record.ruled_by
    line = f"*{label}*" + (f" by {who}" if who else "") + (f": {record.reason}" if record.reason else "")
    return [*text_sections(text), {"type": "context", "elements": [{"type": "mrkdwn", "text": line}]}]


class SlackVerdicts:
    """See the module docstring."""

    def __init__(self, db: Database, web: SlackWeb, book: DecisionBook) -> None:
        self.db = db
        self.web = web
        self.book = book
        self.updated = 0
        self._task: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()  # the listener and the sweep never update one message at once

    async def posted(self, channel: str, ts: str, text: str, blocks: Sequence[dict[str, Any]] | None) -> None:
        """Message ``ts`` in ``channel`` was posted with ``blocks``: recorded when they are a decision's buttons."""
        subject = decision_of(blocks)
        if subject is None or not ts:
            return
        try:
            await self.db.execute(
                "INSERT INTO slack_button_posts(subject, channel_id, ts, body, created_at) VALUES (?, ?, ?, ?, ?) "
                "ON CONFLICT (channel_id, ts) DO UPDATE SET body = excluded.body", (subject, channel, ts, text,
                                                                                     utc_now()))
        except Exception:  # the post went out; only its later update is lost
            log.exception("slack: recording the buttons of decision %s (message %s in %s) failed; they will not "
                          "change when it is ruled on", subject, ts, channel)

    async def pressed(self, channel: str, ts: str, text: str, blocks: list[dict[str, Any]]) -> None:
        """A press was taken: message ``ts`` shows ``blocks`` (who pressed what), unless it shows its decision's
        verdict already (the ruling's update came first: it stays)."""
        async with self._lock:
            shown = await self.db.fetchall("SELECT settled_verdict FROM slack_button_posts WHERE channel_id = ? AND "
                                           "ts = ? AND settled_verdict IS NOT NULL", (channel, ts))
            if not shown:
                await self.web.update(channel, ts, text, None, blocks)

    async def changed(self, change: DecisionChange) -> None:
        """A ruling in this process: the decision's messages say it (a failure is logged, tried again later)."""
        await self._settle(change.record)

    async def sweep(self) -> int:
        """Messages still showing the buttons of a decision that was ruled on are updated; how many were."""
        rows = await self.db.fetchall("SELECT DISTINCT subject FROM slack_button_posts WHERE settled_verdict IS NULL")
        done = 0
        for row in rows:
            found = await self.book.find(str(row["subject"]))
            if found.outcome is Outcome.DONE and found.record is not None \
                    and found.record.verdict is not Verdict.PROPOSED:
                done += await self._settle(found.record)
        return done

    async def _settle(self, record: DecisionRecord) -> int:
        if record.verdict is Verdict.PROPOSED:
            return 0
        async with self._lock:
            rows = await self.db.fetchall(
                "SELECT channel_id, ts, body, settled_verdict FROM slack_button_posts WHERE subject = ?",
                (record.meeting_id,))
            done = 0
            for row in rows:
                if row["settled_verdict"] == record.verdict.value:
                    continue
                channel, ts, body = str(row["channel_id"]), str(row["ts"]), str(row["body"])
                try:
                    await self.web.update(channel, ts, body, None, verdict_blocks(body, record))
                except SendFailed as exc:
                    log.warning("slack: the buttons of decision %s (message %s in %s) still offer a ruling (%s); "
                                "tried again in %.0f s, and a press on them is answered that it is %s",
                                record.meeting_id, ts, channel, exc, SWEEP_S, record.verdict.value)
                    continue
                await self.db.execute("UPDATE slack_button_posts SET settled_verdict = ?, settled_at = ? "
                                      "WHERE channel_id = ? AND ts = ?", (record.verdict.value, utc_now(), channel, ts))
                self.updated += 1
                done += 1
                log.info("slack: decision %s is %s; its buttons in message %s of %s now say so", record.meeting_id,
                         record.verdict.value, ts, channel)
            return done

    def start(self) -> None:
        """Look for rulings made elsewhere now and every :data:`SWEEP_S` seconds."""
        if self._task is None:
            self._task = asyncio.create_task(self._watch(), name="slack verdicts")

    async def _watch(self) -> None:
        while True:
            await asyncio.sleep(SWEEP_S)  # the first look once the channel has started
            try:
                await self.sweep()
            except Exception:  # the next look tries again
                log.exception("slack: looking for decisions ruled elsewhere failed")

    async def stop(self) -> None:
        """Stop looking."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
