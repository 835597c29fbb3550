"""Helpers for the suites of issue 16 (knowledge, web search, memory, guardrails): documents in a workspace,
a tiny PDF maker, boards on the scripted model, what a request carried, state db rows."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from board.agent.runner import AgentSettings
from board.app import Board, BoardSettings
from board.roles import RosterSpec
from tests.support.fakes.scripted_model import Received, ScriptedModel
from tests.support.llm import FAST_RETRY


def write_doc(workspace: Path, relative: str, text: str) -> Path:
    """Write ``text`` to ``workspace/knowledge/<relative>`` (folders made as needed)."""
    path = workspace / "knowledge" / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


async def eventually(check: Callable[[], Awaitable[bool]], timeout: float = 60.0) -> None:
    """Wait until ``check()`` is true (polling), else fail naming the timeout."""
    deadline = time.monotonic() + timeout
    while not await check():
        if time.monotonic() > deadline:
            raise AssertionError(f"not true within {timeout} s")
        await asyncio.sleep(0.05)


def tiny_pdf(pages: list[str], *, title: str | None = None) -> bytes:
    """A valid PDF with one line of Helvetica text per page (and an Info title), built by hand."""
    objects: list[bytes] = []
    page_ids = [4 + 2 * i for i in range(len(pages))]
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    kids = " ".join(f"{i} 0 R" for i in page_ids).encode()
    objects.append(b"<< /Type /Pages /Kids [" + kids + b"] /Count " + str(len(pages)).encode() + b" >>")
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    for i, text in enumerate(pages):
        escaped = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)").encode("latin-1")
        stream = b"BT /F1 12 Tf 72 720 Td (" + escaped + b") Tj ET"
        objects.append(b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> "
                       b">> /Contents " + str(page_ids[i] + 1).encode() + b" 0 R >>")
        objects.append(b"<< /Length " + str(len(stream)).encode() + b" >>\nstream\n" + stream + b"\nendstream")
    info_id = None
    if title is not None:
        objects.append(b"<< /Title (" + title.encode("latin-1") + b") >>")
        info_id = len(objects)
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n".encode() + b"0000000000 65535 f \n"
    for offset in offsets:
        out += f"{offset:010d} 00000 n \n".encode()
    trailer = f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R"
    if info_id is not None:
        trailer += f" /Info {info_id} 0 R"
    out += (trailer + f" >>\nstartxref\n{xref}\n%%EOF\n").encode()
    return bytes(out)


def board_settings(workspace: Path, data_dir: Path, model: ScriptedModel, *, model_name: str = "main",
                   **fields: Any) -> BoardSettings:
    """Board settings whose every role talks to ``model`` (as ``<name>:<model_name>``), plus ``fields``
    (knowledge, web_search, memory, guardrails...)."""
    agent = AgentSettings(default_model=f"{model.name}:{model_name}", retry=FAST_RETRY)
    return BoardSettings(workspace=workspace, data_dir=data_dir, roster=RosterSpec(), agent=agent, **fields)


def context_of(received: Received) -> str:
    """The per-turn block (``<turn_context>``) a request carried."""
    return "\n".join(m.context for m in received.request.messages if m.context)


def system_text(received: Received) -> str:
    """Every system block of a request, joined."""
    return "\n".join(block.text for block in received.request.system)


async def rows(b: Board, sql: str, *params: Any) -> list[dict[str, Any]]:
    """Rows of a query on the board's state db, as dicts."""
    return [dict(r) for r in await b.parts.db.fetchall(sql, params)]
