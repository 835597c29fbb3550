"""What the media store takes, and from whom (issue items 6 and the media half of 9), on a real
``sabha run`` with WhatsApp on the fake Graph API (ShowModel answers ``SAW <what it got>``):

- a file Sabha will not read is refused on what was declared (kind, type, name, size) before a
  byte is downloaded, and a file refused after its download is not kept;
- per-sender quotas (lower for strangers), one for all strangers together and one for the whole
  store: a file over one is not downloaded and the sender is told why in one line; ``sabha
  status`` says how full the store is;
- a download redirected off Meta's hosts is not followed (the token never goes there).
"""

from __future__ import annotations

import asyncio
import hashlib
import io
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import ClientSession, ClientTimeout, web
from PIL import Image

from board.workspace.paths import copy_default_workspace
from tests.bot.channels.whatsapp.test_whatsapp_media import Daemon, ShowModel, media_message
from tests.support.daemon import DAEMON_REPO, SabhaProcess
from tests.support.fakes.graph_api import FakeGraphAPI
from tests.support.telegram import eventually
from tests.support.whatsapp import APP_SECRET, FRIEND, NUMBER_ID, OWNER, STRANGER, VERIFY_TOKEN

ANSWER_S = 300.0  # only "the answer came": a bound for a loaded machine, never a speed
STRANGER_2 = "15550007777"


class RedirectingGraph(FakeGraphAPI):
    """The fake Graph API whose download url answers a redirect for the media in :attr:`redirects`."""

    def __post_init__(self) -> None:
        super().__post_init__()
        self.redirects: dict[str, str] = {}  # media id -> where its download url redirects (once)

    async def _download(self, request: web.Request) -> web.StreamResponse:
        media_id = request.query.get("mid", "")
        target = self.redirects.get(media_id)
        if target is not None and "hop" not in request.query:
            raise web.HTTPFound(target.replace("{url}", str(request.url)))
        return await super()._download(request)


@pytest.fixture
async def graph() -> AsyncIterator[RedirectingGraph]:
    async with RedirectingGraph() as server:
        yield server


def write_config(root: Path, graph: FakeGraphAPI, model: ShowModel, media: list[str]) -> Path:
    """WhatsApp in public mode (owner and friend allowed, strangers welcome) on the fakes."""
    copy_default_workspace(root / "workspace")
    lines = ["workspace: ./workspace", "data_dir: ./sessions", "server: {host: 127.0.0.1, port: 0}",
             "board: {slow_notice_s: 0}",
             "llm:", "  model: openai:gpt-4o-mini", "  retry: {retries: 0}", "  providers:", "    openai:",
             "      api_key: test-key", f"      base_url: {model.base_url}",
             "whatsapp:", f'  phone_number_id: "{NUMBER_ID}"', "  access_token: ${WHATSAPP_ACCESS_TOKEN}",
             "  app_secret: ${WHATSAPP_APP_SECRET}", f"  verify_token: {VERIFY_TOKEN}",
             f"  graph_base_url: {graph.base_url}", f"  api_version: {graph.version}",
             f'  allowed_numbers: ["{OWNER}", "{FRIEND}"]', "  access: public", "  public_rate_per_minute: 60"]
    if media:
        lines += ["media:", *(f"  {line}" for line in media)]
    path = root / "sabha.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
async def start(tmp_path: Path, graph: RedirectingGraph) -> AsyncIterator[Any]:
    """``await start(media_lines)``: a running daemon on ``graph`` (ended with the test)."""
    daemons: list[Daemon] = []
    async with ShowModel(latency=0.01) as model, ClientSession(timeout=ClientTimeout(total=60)) as http:

        async def run(media: list[str]) -> Daemon:
            d = Daemon(tmp_path, graph, model, http)
            env = {"WHATSAPP_ACCESS_TOKEN": graph.token, "WHATSAPP_APP_SECRET": APP_SECRET}
            d.sabha = SabhaProcess(write_config(tmp_path, graph, model, media), env=env)
            daemons.append(d)
            await d.start()
            return d

        try:
            yield run
        finally:
            for d in daemons:
                if d.sabha is not None:
                    await d.sabha.close()


async def _answer(daemon: Daemon, item: dict[str, Any]) -> str:
    await eventually(lambda: daemon.answers_to(item["id"]), f"the answer to {item['id']}", timeout=ANSWER_S)
    [answer] = daemon.answers_to(item["id"])
    return answer


def _stored(daemon: Daemon, data: bytes) -> bool:
    digest = hashlib.sha256(data).hexdigest()
    return (daemon.root / "sessions" / "media" / digest[:2] / digest[2:]).exists()


def _blobs(daemon: Daemon) -> list[Path]:
    return [p for p in (daemon.root / "sessions" / "media").rglob("*") if p.is_file()]


def _noise_png(side: int = 366) -> bytes:
    """A PNG of random pixels (about ``side``² x 3 bytes: noise does not compress), different each time."""
    out = io.BytesIO()
    Image.frombytes("RGB", (side, side), os.urandom(side * side * 3)).save(out, "PNG", compress_level=1)
    return out.getvalue()


# --- refused before download; nothing refused kept ---------------------------------------------------


async def test_files_sabha_will_not_read_are_refused_before_download_and_nothing_refused_is_kept(
    start: Any, graph: RedirectingGraph
) -> None:
    daemon = await start([])
    unread = {  # name -> (bytes, declared type, message kind)
        "photos.zip": (b"PK\x03\x04" + os.urandom(300_000), "application/zip", "document"),
        "setup.exe": (b"MZ" + os.urandom(300_000), "application/x-msdownload", "document"),
        "clip.mp4": (b"\x00\x00\x00\x18ftypmp42" + os.urandom(300_000), "video/mp4", "document"),
        "report.doc": (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + os.urandom(300_000), "application/msword", "document"),
        "a HEIC photo": (os.urandom(300_000), "image/heic", "image"),
    }
    refused_after = {  # downloaded (nothing declared says no), refused once read: not kept
        "deck.pdf": (b"not a pdf at all \x00\xff" * 10_000, "application/pdf", "document"),
        "voice": (b"OggS" + b"\x00" * 20_000, "audio/ogg; codecs=opus", "audio"),
    }
    good = b"Board notes\nQ3 revenue was 42 lakh.\n"
    items: dict[str, tuple[dict[str, Any], str, bytes]] = {}
    for name, (data, mime, kind) in {**unread, **refused_after, "notes.txt": (good, "text/plain", "document")}.items():
        media_id = graph.add_media(data, mime)
        extra: dict[str, Any] = {"mime_type": mime, "caption": f"CAP {name}?"}
        if kind == "document":
            extra["filename"] = name
        if kind == "audio":
            extra["voice"] = True
        items[name] = (media_message(kind, media_id, **extra), media_id, data)
    for item, _, _ in items.values():
        await daemon.post(item)
    await daemon.marker()
    for name, (item, media_id, data) in items.items():
        answer = await _answer(daemon, item)
        assert f"CAP {name}?" in answer, answer
        if name in unread:
            assert graph.media[media_id].downloads == 0, f"{name} was downloaded: {answer}"
            assert "not a format I read" in answer or "old Office" in answer or "not a picture format" in answer, \
                answer
        if name in unread or name in refused_after:
            assert not _stored(daemon, data), f"{name} was kept after it was refused: {answer}"
    assert "Q3 revenue was 42 lakh" in await _answer(daemon, items["notes.txt"][0])
    assert _stored(daemon, good)
    assert [p.name for p in _blobs(daemon)] == [hashlib.sha256(good).hexdigest()[2:]]  # nothing else kept


# --- quotas ------------------------------------------------------------------------------------------


async def _send(daemon: Daemon, graph: FakeGraphAPI, user: str, tag: str) -> tuple[str, str, bytes]:
    """One picture of about 400 KB from ``user``, answered: (answer, media id, bytes)."""
    data = _noise_png()
    media_id = graph.add_media(data, "image/png")
    item = media_message("image", media_id, user=user, mime_type="image/png", caption=f"{tag} look")
    await daemon.post(item)
    return await _answer(daemon, item), media_id, data


async def test_quotas_per_stranger_for_all_strangers_and_in_all_refuse_before_download_and_status_says_it(
    start: Any, graph: RedirectingGraph
) -> None:
    size = len(_noise_png())
    assert 380_000 < size < 420_000, size
    # 1 MB per stranger: two pictures fit, not three; 1.5 MB for all strangers: three fit, not four;
    # 2 MB in all: five fit, not six.
    daemon = await start(["quota_stranger_mb: 1", "quota_strangers_mb: 1.5", "quota_total_mb: 2"])
    sent: dict[str, tuple[str, str, bytes]] = {}
    for user, tag in ((STRANGER, "S1A"), (STRANGER, "S1B"), (STRANGER, "S1C"), (STRANGER_2, "S2A"),
                      (STRANGER_2, "S2B"), (FRIEND, "F1"), (FRIEND, "F2"), (FRIEND, "F3")):
        sent[tag] = await _send(daemon, graph, user, tag)
    kept = {tag for tag, (answer, _, _) in sent.items() if "I did not download" not in answer}
    assert kept == {"S1A", "S1B", "S2A", "F1", "F2"}, {t: a for t, (a, _, _) in sent.items()}
    for tag in ("S1C", "S2B", "F3"):
        answer, media_id, data = sent[tag]
        assert graph.media[media_id].downloads == 0 and not _stored(daemon, data), tag  # declared size: refused
        told = [line for line in answer.splitlines() if line.startswith("⚠️ I did not download")]
        assert tag in answer and len(told) == 1, answer  # one line, before the answer to the caption
    assert "I keep for one person" in sent["S1C"][0]
    assert "people I do not know is full" in sent["S2B"][0]
    assert "file store is full" in sent["F3"][0]
    owner_answer, _, _ = await _send(daemon, graph, OWNER, "OWN")  # the owner is held to the total quota too
    assert "file store is full" in owner_answer
    assert len(_blobs(daemon)) == 5
    status = await _status(daemon)
    assert f"media: {5 * size / 2**20:.1f} MB in 5 file(s)" in status and "of media.quota_total_mb (2.0 MB)" in status
    assert f"from strangers: {3 * size / 2**20:.1f} MB of media.quota_strangers_mb (1.5 MB)" in status, status


async def _status(daemon: Daemon) -> str:
    """``sabha status`` of the running daemon (its own process, this checkout)."""
    assert daemon.sabha is not None
    env = {k: v for k, v in os.environ.items() if not k.startswith("SABHA_")}
    env.update(daemon.sabha.env, PYTHONPATH=str(DAEMON_REPO))
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.cli", "status", "--config", str(daemon.sabha.config),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT, env=env, cwd=str(daemon.root))
    out, _ = await proc.communicate()
    return out.decode()


# --- redirects ---------------------------------------------------------------------------------------


async def test_a_download_redirected_off_metas_hosts_is_not_followed(start: Any, graph: RedirectingGraph) -> None:
    hits: list[tuple[str, str | None]] = []

    async def elsewhere(request: web.Request) -> web.Response:
        hits.append((request.path_qs, request.headers.get("Authorization")))
        return web.Response(body=PNG_SMALL, content_type="image/png")

    app = web.Application()
    app.router.add_get("/{tail:.*}", elsewhere)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        port = runner.addresses[0][1]
        daemon = await start([])
        off = graph.add_media(PNG_SMALL, "image/png")
        graph.redirects[off] = f"http://127.0.0.1:{port}/internal/admin?steal=1"
        home = graph.add_media(PNG_SMALL, "image/png")
        graph.redirects[home] = "{url}&hop=1"  # on the Graph API's own host: followed
        off_item = media_message("image", off, mime_type="image/png", caption="OFF look")
        home_item = media_message("image", home, mime_type="image/png", caption="HOME look")
        await daemon.post(off_item)
        await daemon.post(home_item)
        off_answer, home_answer = await _answer(daemon, off_item), await _answer(daemon, home_item)
    finally:
        await runner.cleanup()
    assert hits == [], hits  # never asked, so never given the token
    assert "OFF" in off_answer and "could not be downloaded from WhatsApp" in off_answer, off_answer
    assert "HOME" in home_answer and "40x30" in home_answer and graph.media[home].downloads == 1, home_answer
    assert daemon.sabha is not None and "download's redirect" in daemon.sabha.log


def _small_png() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (40, 30), (200, 30, 30)).save(out, "PNG")
    return out.getvalue()


PNG_SMALL = _small_png()
