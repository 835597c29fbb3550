"""Chat commands about the model layer: ``/cost`` and ``/compact``.

``/cost [7d|24h|all] [role|day|model|meeting]`` prints the ledger's cost table (fresh and
cached input, the share read from the prompt cache, cost, and what caching saved);
``/compact [role]`` summarises the older part of a conversation now (see
:mod:`board.agent.compaction`). :func:`register` adds them to a command host.
"""

from __future__ import annotations

from board.agent.runner import AgentRunner
from board.commands.host import CommandHost
from board.envelope import Envelope
from board.routing.router import Route
from board.spending.ledger import GROUPS, Ledger, format_report, parse_since

__all__ = ["register"]


def _since_label(text: str) -> str:
    return "since the beginning" if text == "all" else f"in the last {text}" if text[:-1].isdigit() else f"since {text}"


def register(host: CommandHost, *, ledger: Ledger, runner: AgentRunner) -> None:
    """Add ``/cost`` and ``/compact`` to ``host``."""

    async def cost(envelope: Envelope, route: Route) -> str:
        since_text, by = "7d", "role"
        for word in route.text.split():
            if word.lower() in GROUPS:
                by = word.lower()
            else:
                since_text = word
        try:
            since = parse_since(since_text)
        except ValueError as exc:
            return f"{exc}. Usage: /cost [7d|24h|all] [{'|'.join(GROUPS)}]"
        rows = await ledger.summary(since=since, by=by)
        total = await ledger.total(since=since)
        return format_report(rows, total, by=by, since_label=_since_label(since_text))

    async def compact(envelope: Envelope, route: Route) -> str:
        target = host.command_target(envelope, route)
        if isinstance(target, str):
            return target
        role, key = target
        async with host.lock_for(key):
            done = await runner.compact(key, role, force=True, envelope=envelope)
        if done is None:
            return (f"Nothing to compact in the conversation with {role} yet (or the summariser is unavailable; "
                    "see the log).")
        return (
            f"Compacted the conversation with {role}: {done.summarized} older message(s) summarised, "
            f"{done.kept} kept; history {done.tokens_before} -> {done.tokens_after} tokens "
            f"({done.record.get('token_method')})."
        )

    host.register_command("cost", cost, "/cost [7d|all] [role|day|model|meeting]: what the models cost and what "
                          "prompt caching saved", owner_only=True)  # the whole board's spend
    host.register_command("compact", compact, "/compact [role]: summarise the older part of a conversation now")
