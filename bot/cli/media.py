"""``sabha media``: what conversations have attached, for the owner.

``media list [--chat ID] [--channel NAME] [--limit N] [--json]`` shows the newest
attachments first (every conversation, or one chat): when, where, who sent it, its kind,
name and size, and what became of it: read into the turn, ``searchable`` (a long document
indexed in that conversation's own knowledge scope, which only that conversation's advisors
search) or why it could not be read.
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from board.workspace.quoting import plain_line
from bot.cli.common import emit, note
from bot.cli.where import has_state, open_config

if TYPE_CHECKING:
    from board.media.store import StoredAttachment
    from bot.config import LoadedConfig

__all__ = ["add_parsers", "cmd_media"]


def _searchable(loaded: LoadedConfig, rows: list[StoredAttachment]) -> set[tuple[str, str]]:
    """(conversation scope, blob) of the listed documents indexed for search (empty when the index is off)."""
    from board.memory.knowledge.base import INDEX_FILE
    from board.memory.knowledge.index import KnowledgeIndex, conversation_scope

    path = loaded.data_dir / INDEX_FILE
    scopes = sorted({conversation_scope(r.channel, r.chat_id) for r in rows if r.blob})
    if not scopes or not path.is_file():
        return set()
    try:
        index = KnowledgeIndex(path)
    except Exception as exc:  # noqa: BLE001 - no FTS5 here, a damaged file: the listing still shows the rest
        note(f"warning: the knowledge index {path} could not be read ({exc}); 'searchable' is not shown")
        return set()
    try:
        docs = index.documents(scopes)
    finally:
        index.close()
    return {(d.scope, d.path.split("/")[1]) for d in docs if d.path.count("/") >= 2}  # <scope>/<blob>/<name>


def _status(row: StoredAttachment, searchable: set[tuple[str, str]]) -> str:
    from board.memory.knowledge.index import conversation_scope

    if row.problem:
        return f"not read: {row.problem}"
    if row.blob and (conversation_scope(row.channel, row.chat_id), row.blob[:16]) in searchable:
        return "searchable"
    return "read" if row.derived else "-"


def _size(size: int | None) -> str:
    if size is None:
        return "-"
    return f"{size / 1024:.1f} KB" if size < 1024 * 1024 else f"{size / (1024 * 1024):.1f} MB"


async def cmd_media(args: argparse.Namespace) -> int:
    """``sabha media list``."""
    from board.media.store import MediaStore
    from bot.app import open_state_db

    loaded = open_config(args, writes=False)
    if not has_state(loaded):
        emit(f"nothing attached yet: no state database in {loaded.data_dir}")
        return 0
    async with await open_state_db(loaded) as db:
        rows = await MediaStore(db).recent(channel=args.channel, chat_id=args.chat, limit=args.limit)
    searchable = _searchable(loaded, rows)
    if args.json:
        emit(json.dumps([{"at": r.created_at, "channel": r.channel, "chat": r.chat_id, "thread": r.thread_id,
                          "message": r.message_id, "sender": r.sender, "kind": r.kind.value, "name": r.name,
                          "mime": r.mime, "bytes": r.size, "blob": r.blob, "status": _status(r, searchable)}
                         for r in rows], indent=2, ensure_ascii=False))
        return 0
    if not rows:
        where = " ".join(part for part in (f"on {args.channel}" if args.channel else "",
                                           f"in chat {args.chat}" if args.chat else "") if part)
        emit(f"nothing attached{' ' + where if where else ''} yet")
        return 0
    from bot.cli.table import local_time, table

    lines = table(["WHEN", "CHANNEL", "CHAT", "FROM", "KIND", "NAME", "SIZE", "STATUS"],
                  [[local_time(r.created_at), r.channel, r.chat_id, r.sender, r.kind.value,
                    plain_line(r.name, 60) if r.name else "-",  # a name from outside: no escape codes
                    _size(r.size), _status(r, searchable)] for r in rows], right=(6,))
    for line in lines:
        emit(line)
    emit(f"{len(rows)} attachment(s), newest first; 'searchable': a long document its conversation's advisors "
         "search with search_knowledge_base")
    return 0


def add_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    """``sabha media``."""
    p = sub.add_parser("media", parents=[common], help="what conversations have attached: documents, voice, pictures",
                       description="Attachments the board received, newest first, and what became of each: read, "
                                   "searchable (a long document, in its conversation's own knowledge scope) or "
                                   "why it could not be read.")
    msub = p.add_subparsers(dest="media_command", metavar="ACTION", required=True)
    mp = msub.add_parser("list", parents=[common], help="the newest attachments (of every chat, or one)")
    mp.add_argument("--chat", help="only this chat (its id as the channel gives it, e.g. 12345 or 15550001111)")
    mp.add_argument("--channel", help="only this channel: telegram, whatsapp, console ...")
    mp.add_argument("--limit", type=int, default=50, metavar="N", help="how many (default 50)")
    mp.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(handler=cmd_media)
