"""The one call that answers a message: :func:`answer` (the outer twin of :mod:`board.agent.exchange`).

admit (clean -> limit -> identify -> route -> gate, :mod:`board.answer.admit`) -> read the attachments
once, after the gate (``read_files``: the intake's and the terminal's; a caller may hand over files read
already), unless the budget is spent: nothing is downloaded or transcribed, that would be paid for, and
the budget's line answers -> in the message's spending and streaming context, set here
and nowhere else: dispatch (:mod:`board.answer.dispatch`) -> the owner's budget note -> spoken, when
the sender wants a voice reply (``spoken``: the intake's messages). Never raises for bad input; the
reply says what went wrong and what to do.
"""

from __future__ import annotations

import contextlib
import logging
from dataclasses import replace

from board.answer.admit import Admitted, admit, identify, with_owner_note
from board.answer.dispatch import dispatch
from board.answer.door import Door
from board.envelope import Envelope, Reply
from board.llm.stream import StreamSink, streaming_to
from board.media.attachment import MediaKind
from board.media.understand import MediaFetcher
from board.routing.router import Route
from board.spending.budget import sender_id
from board.telemetry.spans import traced
from board.workspace.files import new_look, one_look

__all__ = ["answer", "read_media"]

log = logging.getLogger("sabha.board")


@traced("answer")
async def answer(envelope: Envelope, door: Door, *, fetcher: MediaFetcher | None = None,
                 sink: StreamSink | None = None, route: Route | None = None, spoken: bool = False,
                 received_clean: bool = False, read_files: bool = False) -> Reply:
    """Answer one message: a chat turn, a command, a meeting, or a one-line refusal.

    ``fetcher``: where its attachments' bytes come from (the channel); ``sink``: where a streamed answer
    goes while it is written; ``route``: what the router made of this very envelope a moment ago (a
    caller that looked first, like ``sabha ask``); ``spoken``: a voice reply when the sender wants one;
    ``received_clean``: cleaned at receipt (the intake's), so it is not cleaned again; ``read_files``: its
    attachments are references still to fetch and read (a channel's, a terminal's files), else already read."""
    look = new_look()  # the soul files looked at once for the admission and the chat turn that follows at once
    with one_look(look):
        admitted = await admit(envelope, door, route=route, received_clean=received_clean, reads_files=read_files)
    if isinstance(admitted, Reply):
        return admitted
    if door.owner_seen is not None and admitted.envelope.is_owner:
        await door.owner_seen(admitted.envelope)
    asked = await _read(admitted, door, fetcher) if read_files else admitted
    streaming = streaming_to(sink) if sink is not None else contextlib.nullcontext()  # else the caller's, if any
    with door.money.spending(asked.envelope, asked.allowance), streaming:
        reply = with_owner_note(door, asked.envelope, await dispatch(asked, door, look=None if read_files else look))
    return await door.media.speak(asked.envelope, reply) if spoken else reply


#: Attachments whose reading is paid for (a transcription, :mod:`board.media.speech`); the others are read here.
PAID_READS = frozenset({MediaKind.VOICE, MediaKind.AUDIO, MediaKind.VIDEO})


async def _read(admitted: Admitted, door: Door, fetcher: MediaFetcher | None) -> Admitted:
    """``admitted`` with its attachments fetched and read, unless its budget is spent. After a read that was
    paid for the budget is asked again (by the dispatch): what the transcription cost may have reached a limit,
    and then the answer is the limit's line, not a chat answer on top."""
    envelope = admitted.envelope
    if not envelope.attachments:
        return admitted
    if admitted.stop is not None:
        log.info("media of message %s from %s on %s not read: the budget is spent", envelope.message_id,
                 envelope.sender, envelope.channel)
        return admitted
    read = await door.media.prepare(envelope, fetcher)
    paid = any(after.kind in PAID_READS and after.derived and not before.derived
               for before, after in zip(envelope.attachments, read.attachments, strict=False))
    return replace(admitted, envelope=read, checked=admitted.checked and not paid)


async def read_media(envelope: Envelope, door: Door, fetcher: MediaFetcher | None) -> Envelope:
    """``envelope`` with its attachments fetched and read (:meth:`MediaService.prepare`) outside a message's
    answer (a meeting's evidence), unless the sender's budget is spent: then nothing is downloaded."""
    if not envelope.attachments:
        return envelope
    envelope = await identify(door, envelope)
    if await door.budget.check(sender_id(envelope), is_owner=envelope.is_owner) is not None:
        log.info("media of message %s from %s on %s not read: the budget is spent", envelope.message_id,
                 envelope.sender, envelope.channel)
        return envelope
    return await door.media.prepare(envelope, fetcher)

