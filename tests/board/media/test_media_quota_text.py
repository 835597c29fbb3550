"""The media quotas count the text kept from a file, on a real ``sabha run`` (issue 36, item 6's leftovers).

A DOCX of one sentence repeated is under 40 KB sent, but the text read from it (up to ``media.doc_max_chars``)
is kept in the state db with the file: a stranger sending many such files would fill the database with text
while their file quota stayed nearly empty. With the text counted, their quota fills and the next file is
refused before download; ``sabha status --json`` shows the kept text's bytes.
"""

from __future__ import annotations

import json
from typing import Any

from tests.board.media.test_media_documents import docx_bytes
from tests.board.media.test_media_limits import RedirectingGraph, _answer, graph, start  # noqa: F401 - fixtures
from tests.bot.channels.whatsapp.test_whatsapp_media import Daemon, media_message
from tests.support.web_decisions import cli
from tests.support.whatsapp import STRANGER

DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"


def wordy_docx(tag: str, chars: int = 300_000) -> bytes:
    """A DOCX of ``chars`` characters of text in a few KB (one sentence repeated compresses well)."""
    line = f"{tag}: the quarterly plan repeats this sentence many times over. "
    return docx_bytes([line * 40] * (chars // (len(line) * 40)))


async def _document(daemon: Daemon, tag: str) -> str:
    data = wordy_docx(tag)
    assert len(data) < 64 * 1024, len(data)
    item = media_message("document", daemon.graph.add_media(data, DOCX), user=STRANGER, mime_type=DOCX,
                         filename=f"{tag}.docx", caption=f"{tag} what does it say?")
    await daemon.post(item)
    return await _answer(daemon, item)


async def test_a_strangers_quota_counts_the_text_kept_from_small_documents(
    start: Any, graph: RedirectingGraph  # noqa: F811 - test_media_limits' fixtures
) -> None:
    daemon = await start(["quota_stranger_mb: 1"])
    answers = [await _document(daemon, f"D{i}") for i in range(1, 6)]  # 5 x 300 K characters kept: over 1 MB
    refused = [i + 1 for i, a in enumerate(answers) if "I did not download" in a]
    # about 333 KB kept each (300 K characters read, the row's copy, the 37 KB file): after three, no room for more
    assert refused == [4, 5] and "I keep for one person" in answers[3], answers[3][:300]
    assert daemon.sabha is not None
    status = await cli(daemon.sabha.config, "status", "--json")
    media = json.loads(status.stdout)["media"]
    assert media["text_bytes"] >= 3 * 300_000 and media["strangers_bytes"] >= media["text_bytes"], media
