"""Work taken up from storage joins the trace it arrived in: :func:`traceparent` gives the current span's W3C
context as text, and a ``root`` span opened with it as ``parent`` is that span's child (same trace id) and links to
it, as the messaging conventions ask of a consumer's span; without one, or with text that is not a valid
``traceparent`` (a row stored before tracing was on, or by a replica without it), it starts a trace of its own.
Spans are decoded by the local OTLP/HTTP receiver."""

from __future__ import annotations

import asyncio
import re

from board.telemetry.exporting import TraceExport, start_tracing
from board.telemetry.spans import span, traced, traceparent
from tests.support.fakes.otlp_receiver import OtlpReceiver


@traced("message", lambda stored: {"sabha.test": stored or "none"}, root=True, parent=lambda stored: stored)
async def answer(stored: str | None) -> str | None:
    return traceparent()


async def test_a_span_taken_up_from_storage_is_the_child_of_the_span_that_stored_it() -> None:
    async with OtlpReceiver() as receiver:
        tracing = start_tracing(TraceExport(endpoint=f"{receiver.endpoint}/v1/traces", export_delay_s=0.05))
        try:
            assert traceparent() is None  # no span is current
            with span("receipt"):
                stored = traceparent()
            assert stored is not None and re.fullmatch(r"00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}", stored)
            inner = await answer(stored)
            with span("dispatcher"):  # whatever is current when the stored work is taken up is not its parent
                await answer(stored)
            await answer(None)  # stored while tracing was off
            await answer("00-not-a-trace-context-01")
        finally:
            await asyncio.to_thread(tracing.stop)
    by_name = {s.name: s for s in receiver.spans if s.name != "message"}
    receipt = by_name["receipt"]
    messages = [s for s in receiver.spans if s.name == "message"]
    joined = [s for s in messages if s.attributes["sabha.test"] == stored]
    assert len(joined) == 2
    assert all(s.trace_id == receipt.trace_id and s.parent_id == receipt.span_id for s in joined)
    assert all(s.links == (receipt.trace_id,) for s in joined)  # linked to it as well, not to what was current
    assert inner is not None and inner.split("-")[1] == receipt.trace_id
    alone = [s for s in messages if s.attributes["sabha.test"] != stored]
    assert len(alone) == 2 and all(not s.parent_id and s.trace_id != receipt.trace_id and not s.links for s in alone)
