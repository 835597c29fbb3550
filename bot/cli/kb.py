"""``sabha kb``: the knowledge base from the terminal.

``kb add PATH... [--role ROLE]`` copies documents (files, or every Markdown, text and PDF
file of a folder) into ``workspace/knowledge/shared/`` or ``workspace/knowledge/<role>/``
and indexes them at once (a running daemon's watcher sees them too). Each is checked first,
as the index checks it (no symlink, a regular file, within ``knowledge.max_file_bytes``,
readable as its format): one that would not be indexed is not copied, and the note says
why. ``kb search WORDS [--role ROLE]`` prints the best passages with source, section and
score: with ``--role`` exactly what that role's ``search_knowledge_base`` returns, without it
the owner's view of every document. ``kb list`` shows every document, its scope, its chunks and any reason it
was not indexed. ``kb reindex`` rebuilds the index from the documents (and the long documents attached in
conversations in the last ``media.keep_days``, from the state db's text cache).

The index is where the board keeps it: its own SQLite file in the data dir, or, with ``state.url`` on
PostgreSQL, tables of that database (the one every replica shares), opened here for the command.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bot.cli.common import UserError, emit, note
from bot.cli.where import open_config

if TYPE_CHECKING:
    from board.memory.knowledge.base import KnowledgeBase
    from board.storage import Database
    from bot.config import LoadedConfig

__all__ = ["add_parsers", "cmd_kb"]


def _open(loaded: LoadedConfig, db: Database | None) -> KnowledgeBase:
    from board.memory.knowledge.base import KnowledgeBase
    from board.memory.knowledge.fts import FTS5Unavailable

    settings = loaded.config.knowledge.settings()
    if not settings.enabled:
        raise UserError(f"the knowledge base is off (knowledge.enabled: false in {loaded.source}); set it to true")
    if not loaded.workspace.is_dir():
        raise UserError(f"the workspace {loaded.workspace} does not exist; run `sabha init` to create one")
    try:
        return KnowledgeBase.open(loaded.workspace, loaded.data_dir, settings, db=db)
    except FTS5Unavailable as exc:
        raise UserError(str(exc)) from exc
    except ValueError as exc:  # knowledge.folder outside the workspace
        raise UserError(str(exc)) from exc


def _check_role(loaded: LoadedConfig, role: str | None) -> None:
    from board.roles import DEFAULT_ROSTERS, GENERAL, is_role_slug

    if role is None or role == "shared":
        return
    if not is_role_slug(role):
        raise UserError(f"{role!r} is not a role slug (lowercase letters, digits, - or _), e.g. finance")
    known = {GENERAL, *(r for roles in DEFAULT_ROSTERS.values() for r in roles),
             *(r for roles in loaded.config.board.rosters.values() for r in roles)}
    if role not in known:
        note(f"warning: no roster has a role {role!r}; only a role of that name will read these documents")


def _documents(paths: list[str]) -> list[Path]:
    from board.memory.knowledge.chunking import SUPPORTED_SUFFIXES

    found: list[Path] = []
    for text in paths:
        path = Path(text).expanduser()
        if path.is_symlink() or (os.path.lexists(path) and not path.is_dir()):
            found.append(path)  # a link, a FIFO, a device ...: KnowledgeBase.add says why it is refused
        elif path.is_dir():
            inside = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in SUPPORTED_SUFFIXES
                            and not any(part.startswith(".") for part in p.relative_to(path).parts))
            if not inside:
                raise UserError(f"{path} holds no {', '.join(SUPPORTED_SUFFIXES)} files")
            found.extend(inside)
        else:
            raise UserError(f"{path} does not exist")
    return found


async def _add(kb: KnowledgeBase, args: argparse.Namespace) -> int:
    code = 0
    for source in _documents(args.paths):
        try:
            target, report = await kb.add(source, args.role, overwrite=args.force)
        except FileNotFoundError:
            note(f"{source} does not exist (nothing copied)")
            code = 1
            continue
        except (ValueError, FileExistsError) as exc:
            note(f"{exc} (nothing copied)")
            code = 1
            continue
        relative = target.relative_to(kb.folder).as_posix()
        failed = dict(report.failed)
        if relative in failed:
            note(f"{source}: copied to knowledge/{relative} but not indexed: {failed[relative]}")
            code = 1
            continue
        chunks = next((d.chunks for d in await kb.documents() if d.path == relative), 0)
        emit(f"added knowledge/{relative} ({chunks} chunk{'s' if chunks != 1 else ''}; "
             f"{'every role reads it' if relative.startswith('shared/') else f'only {args.role} reads it'})")
    return code


async def _search(kb: KnowledgeBase, args: argparse.Namespace) -> int:
    query = " ".join(args.query).strip()
    if not query:
        raise UserError('nothing to search for: give some words, e.g. sabha kb search "enterprise pricing"')
    hits = await kb.search(query, role=args.role, limit=args.limit)
    if args.json:
        emit(json.dumps([{"source": f"knowledge/{h.source}", "scope": h.scope, "section": h.heading,
                          "score": h.score, "text": h.text} for h in hits], indent=2, ensure_ascii=False))
        return 0
    if not hits:
        who = f"the {args.role} role" if args.role else "any document"
        emit(f"nothing in {who} matches {query!r} ({(await kb.counts())[0]} documents indexed; `sabha kb list`)")
        return 0
    for rank, hit in enumerate(hits, start=1):
        emit(f"{rank}. knowledge/{hit.source} § {hit.heading}  (score {hit.score:.3g}, {hit.scope})")
        text = " ".join(hit.text.split())
        emit(f"   {text[:300]}{'…' if len(text) > 300 else ''}")
    return 0


async def _list(kb: KnowledgeBase, args: argparse.Namespace) -> int:
    from bot.cli.table import table

    docs = await kb.documents(args.role)
    if args.json:
        emit(json.dumps([{"path": f"knowledge/{d.path}", "scope": d.scope, "bytes": d.size, "chunks": d.chunks,
                          "indexed_at": d.indexed_at, "error": d.error} for d in docs], indent=2, ensure_ascii=False))
        return 0
    if not docs:
        emit(f"no documents in {kb.folder}: add some with `sabha kb add FILE [--role ROLE]` "
             "(shared/ is read by every role, <role>/ only by that role)")
        return 0
    rows = [[f"knowledge/{d.path}", d.scope, str(d.chunks), f"{d.size / 1024:.1f} KB", d.indexed_at] for d in docs]
    for line in table(["DOCUMENT", "SCOPE", "CHUNKS", "SIZE", "INDEXED"], rows, right=(2, 3)):
        emit(line)
    for d in docs:
        if d.error:
            emit(f"not indexed: knowledge/{d.path}: {d.error}")
    chunks = sum(d.chunks for d in docs)
    emit(f"{len(docs)} document(s), {chunks} chunk(s); index {kb.index.where}")
    return 1 if any(d.error for d in docs) else 0


async def _reindex(kb: KnowledgeBase, args: argparse.Namespace, db: Database | None) -> int:
    report = await kb.rebuild()
    emit(f"rebuilt {kb.index.where}: {report.describe()}")
    attached = await _reshelve(kb, args, db)
    if attached:
        emit(f"indexed again {attached} long document(s) attached in conversations (last media.keep_days)")
    return 1 if report.failed else 0


async def _reshelve(kb: KnowledgeBase, args: argparse.Namespace, db: Database | None) -> int:
    """The conversations' long documents back into the rebuilt index (from the state db's text cache)."""
    from board.media.library import reshelve
    from board.media.store import MediaStore
    from bot.app import open_state_db
    from bot.cli.where import has_state

    loaded = open_config(args, writes=False)
    if db is not None:  # PostgreSQL: the state store is open already
        return await reshelve(kb, MediaStore(db), loaded.config.media.settings())
    if not has_state(loaded):
        return 0
    async with await open_state_db(loaded) as state:
        return await reshelve(kb, MediaStore(state), loaded.config.media.settings())


async def _state_store(loaded: LoadedConfig, stack: contextlib.AsyncExitStack) -> Database | None:
    """The PostgreSQL state store that holds the index (``state.url``); None on SQLite, whose index is its own
    file (the state db is then not opened at all)."""
    from board.storage import Dialect, StorageError
    from bot.app import open_state_db

    url = loaded.state_url()
    if url.dialect is not Dialect.POSTGRES:
        return None
    try:
        db = await open_state_db(loaded)
    except StorageError as exc:
        raise UserError(f"{exc}; the knowledge index is in the state database (state.url): start PostgreSQL "
                        "or fix state.url, then try again") from exc
    stack.push_async_callback(db.close)
    return db


async def cmd_kb(args: argparse.Namespace) -> int:
    """``sabha kb add|search|list|reindex``."""
    loaded = open_config(args, writes=args.kb_command in ("add", "reindex"))
    _check_role(loaded, args.role)
    async with contextlib.AsyncExitStack() as stack:
        db = await _state_store(loaded, stack)
        kb = _open(loaded, db)
        stack.callback(kb.close)
        if args.kb_command == "reindex":
            return await _reindex(kb, args, db)
        action = {"add": _add, "search": _search, "list": _list}[args.kb_command]
        return await action(kb, args)
    raise AssertionError("unreachable")


def add_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    """``sabha kb``."""
    p = sub.add_parser("kb", parents=[common], help="the knowledge base: add, search and list documents",
                       description="Documents agents search with search_knowledge_base: workspace/knowledge/shared/ "
                                   "for every role, workspace/knowledge/<role>/ for one role only. Markdown, plain "
                                   "text and PDF, indexed with SQLite FTS5 (with state.url on PostgreSQL: its "
                                   "full-text search, in the state database).")
    ksub = p.add_subparsers(dest="kb_command", metavar="ACTION", required=True)
    kp = ksub.add_parser("add", parents=[common], help="copy documents in and index them",
                         description="Copy files (or every .md/.txt/.pdf in a folder) into the knowledge folder "
                                     "and index them now.")
    kp.add_argument("paths", nargs="+", metavar="PATH", help="a file or a folder")
    kp.add_argument("--role", help="only this role may read them (default: shared with every role)")
    kp.add_argument("--force", action="store_true", help="replace a different file of the same name")
    kp = ksub.add_parser("search", parents=[common], help="the best passages for some words",
                         description="Search as ROLE would (its private documents and the shared ones), or, "
                                     "without --role, every document.")
    kp.add_argument("query", nargs="+", metavar="WORDS")
    kp.add_argument("--role", help="search with this role's permissions")
    kp.add_argument("--limit", type=int, default=None, metavar="N", help="passages to show (default: knowledge."
                                                                         "max_results)")
    kp.add_argument("--json", action="store_true", help="machine-readable output")
    kp = ksub.add_parser("list", parents=[common], help="every document, its scope, chunks and problems")
    kp.add_argument("--role", help="only what this role may read")
    kp.add_argument("--json", action="store_true", help="machine-readable output")
    kp = ksub.add_parser("reindex", parents=[common], help="rebuild the index from the documents")
    kp.set_defaults(role=None)
    p.set_defaults(handler=cmd_kb)
