"""``sabha whatsapp ...``: the WhatsApp channel from the command line.

``sabha whatsapp undeliverable`` lists replies Meta refused because the user's 24-hour
window had closed (131047); ``sabha whatsapp deliveries`` counts outbound messages by
their latest status.
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from bot.cli.common import emit

if TYPE_CHECKING:  # `sabha --help` builds this parser: the rest is imported when the command runs
    from board.app.parts import Parts
    from bot.channels.plugin import CliCommand, WithParts
    from bot.config import LoadedConfig

__all__ = ["add_cli"]


def add_cli(sub: Any, common: argparse.ArgumentParser) -> CliCommand:
    """Add ``sabha whatsapp undeliverable|deliveries``; returns the handler."""
    p = sub.add_parser("whatsapp", parents=[common], help="inspect the WhatsApp channel",
                       description="Inspect the WhatsApp channel's deliveries.")
    wsub = p.add_subparsers(dest="whatsapp_command", metavar="ACTION", required=True)
    u = wsub.add_parser("undeliverable", parents=[common], help="replies refused: the 24-hour window had closed",
                        description="Replies Meta refused because the user had not written for 24 hours (131047).")
    u.add_argument("--json", action="store_true", help="machine-readable output")
    d = wsub.add_parser("deliveries", parents=[common], help="outbound messages by status",
                        description="How many outbound messages stand in each status.")
    d.add_argument("--json", action="store_true", help="machine-readable output")
    return cmd_whatsapp


async def cmd_whatsapp(loaded: LoadedConfig, args: argparse.Namespace, with_parts: WithParts) -> int:
    """whatsapp undeliverable | deliveries."""

    from bot.channels.whatsapp.store import DeliveryStore

    async def body(parts: Parts) -> int:
        store = DeliveryStore(parts.db)
        if args.whatsapp_command == "deliveries":
            counts = await store.counts()
            if args.json:
                emit(json.dumps(counts, indent=2))
            else:
                for status, n in sorted(counts.items()):
                    emit(f"{status:<14} {n}")
                if not counts:
                    emit("no WhatsApp messages sent yet")
            return 0
        rows = await store.undeliverable()
        if args.json:
            emit(json.dumps([r.__dict__ for r in rows], indent=2))
            return 0
        if not rows:
            emit("no undeliverable replies")
            return 0
        emit("replies refused because the 24-hour window had closed (the user must write first):")
        for r in rows:
            emit(f"{r.updated_at}  to {r.user}  answering {r.reply_to or '?'}  {r.error_code} {r.error_title or ''}")
        return 0

    return await with_parts(loaded, body)
