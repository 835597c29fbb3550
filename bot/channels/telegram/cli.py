"""``sabha telegram ...``: inspecting the Telegram setup from the command line."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from board.roles import GENERAL
from bot.cli.common import UserError, emit

if TYPE_CHECKING:  # `sabha --help` builds this parser: the rest is imported when the command runs
    from board.app.parts import Parts
    from bot.channels.plugin import CliCommand, WithParts
    from bot.config import LoadedConfig

__all__ = ["add_cli"]


def add_cli(sub: Any, common: argparse.ArgumentParser) -> CliCommand:
    """Add ``sabha telegram topics`` to the parser; returns the command's handler."""
    p = sub.add_parser("telegram", parents=[common], help="inspect the Telegram setup",
                       description="Inspect the Telegram channel's setup.")
    tsub = p.add_subparsers(dest="telegram_command", metavar="ACTION", required=True)
    tp = tsub.add_parser("topics", parents=[common], help="which forum topic belongs to which role",
                         description="The role -> forum topic map (telegram.topics first, then topics Sabha created).")
    tp.add_argument("--json", action="store_true", help="machine-readable output")
    return cmd_telegram


async def cmd_telegram(loaded: LoadedConfig, args: argparse.Namespace, with_parts: WithParts) -> int:
    """telegram topics: the role -> forum topic map (config, then state db)."""
    from bot.channels.telegram.topics import Topics, TopicStore, topic_name

    tg = loaded.config.telegram
    group_id = tg.group_id
    if group_id is None:
        raise UserError("telegram.group_id is not set: put the forum's id (e.g. -1001234567890) in the config")

    async def body(parts: Parts) -> int:
        topics = Topics(group_id, TopicStore(parts.db), tg.topics)
        await topics.load()
        rows = []
        for profile in parts.souls.profiles():
            entry = topics.entries.get(profile.role)
            if profile.role == GENERAL:
                rows.append((profile.role, "General", "", "the forum's General topic"))
            elif entry is not None:
                rows.append((profile.role, str(entry.thread_id), entry.source, entry.name))
            else:
                todo = "created at the next `sabha run`" if tg.auto_create_topics else \
                    "none (auto_create_topics is off: add it to telegram.topics)"
                rows.append((profile.role, "-", "", f"{topic_name(profile)}: {todo}"))
        if args.json:
            emit(json.dumps({"group_id": tg.group_id, "topics": [
                {"role": r, "thread_id": None if t in ("-", "General") else int(t), "source": s or None,
                 "name": n} for r, t, s, n in rows]}, indent=2, ensure_ascii=False))
            return 0
        emit(f"forum {tg.group_id}")
        for role, thread, source, name in rows:
            emit(f"{role:<12} {thread:<8} {source:<8} {name}")
        return 0

    return await with_parts(loaded, body)
