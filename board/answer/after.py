"""After an answer is delivered: :func:`after`, the work a chat turn leaves for later, done outside the turn.

A conversation whose history is over its budget is compacted (a summary: one more model call) at the start of its
next turn, so that turn's answer waited for a summary first, and under a busy intake held its place under the turn
cap twice as long (``benchmarks/webhook.py``: 1,100-1,200 model calls for 1,000 turns in later rounds, one round's
answers 1.2x the ideal in the first and 1.3-1.5x after). Here the history is compacted as soon as the answer that
made it due has been delivered: the summary is the same call at an earlier moment, and the next turn asks the model
once. The caller (the intake) has given its place under the cap back and still holds the conversation, so the
conversation's next message waits for the summary, as it did; no other conversation does.

The summary is paid for as the turn's was: in the sender's spending context, a stranger's held to their limits (a
call that would pass them is not made). Skipped (the next turn compacts, as before): a reply that is not a model's
answer, one that failed, and any once the budget's daily limit is reached. Never raises: a summariser that does not
answer is logged by the compaction and tried again at the next turn.
"""

from __future__ import annotations

import logging

from board.answer.door import Door
from board.envelope import Envelope, Reply
from board.spending.allowance import SpendRefused
from board.spending.budget import sender_id

__all__ = ["after"]

log = logging.getLogger("sabha.board")


async def after(envelope: Envelope, reply: Reply, door: Door) -> None:
    """The work ``reply`` (the answer to ``envelope``, delivered) leaves: its session's history compacted ahead of
    the next turn when that turn would compact it (see the module docstring)."""
    key = reply.session_key
    if key is None or reply.kind != "answer" or reply.degraded:
        return
    try:
        if not door.runner.compaction_due(key):
            return  # most answers: nothing more, not even a query
        if await door.budget.check(sender_id(envelope), is_owner=envelope.is_owner) is not None:
            return  # the next message is told about the budget; no summary is paid for meanwhile
        async with door.locks.lock_for(key):
            with door.money.spending(envelope):
                await door.runner.compact_ahead(key, reply.role, envelope)
    except SpendRefused:
        return
    except Exception:  # the answer is delivered; the next turn compacts instead
        log.exception("compacting %s after its answer failed; its next turn compacts it", key)
