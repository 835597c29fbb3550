"""Helpers of the web decisions tests (tests/bot/web/test_web_decisions*.py): sign in with a real link, hold a
meeting from the New meeting form to its decision, read a page's CSRF token, run the real CLI."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
from pathlib import Path

from aiohttp import ClientSession

from bot.web.auth import COOKIE
from tests.support.browser import WebDaemon

__all__ = ["HTML", "cli", "csrf_of", "hold_meeting", "sabha_cli", "sign_in"]

REPO = Path(__file__).resolve().parents[2]
HTML = {"Accept": "text/html,application/xhtml+xml"}


async def sign_in(http: ClientSession, d: WebDaemon) -> dict[str, str]:
    """Redeem a link from the real ``sabha web link``; the headers a signed-in browser sends."""
    link = await d.link()
    token = link.split("token=", 1)[1]
    async with http.post(f"{d.base}/ui/login", data={"token": token}, allow_redirects=False) as resp:
        assert resp.status == 303, await resp.text()
        found = re.search(rf"{COOKIE}=([^;]+)", resp.headers["Set-Cookie"])
    assert found is not None
    return {**HTML, "Cookie": f"{COOKIE}={found.group(1)}"}


def csrf_of(page: str) -> str:
    """The CSRF token in a page's forms."""
    found = re.search(r'name="csrf" value="([^"]+)"', page)
    assert found, page[:500]
    return found.group(1)


async def hold_meeting(http: ClientSession, d: WebDaemon, jar: dict[str, str], topic: str) -> str:
    """Start a meeting from the New meeting form and wait for its end; its id (it reached a decision)."""
    async with http.get(d.base + "/ui/meetings/new", headers=jar) as resp:
        page = await resp.text()
    nonce = re.search(r'name="nonce" value="([^"]+)"', page)
    assert nonce, page[:500]
    form = {"topic": topic, "roster": d.board.settings.roster.name, "rounds": "1", "mode": "parallel",
            "csrf": csrf_of(page), "nonce": nonce.group(1)}
    async with http.post(d.base + "/ui/meetings", data=form, headers=jar, allow_redirects=False) as resp:
        assert resp.status == 303, await resp.text()
        meeting_id = resp.headers["Location"].rsplit("/", 1)[1]
    await d.board.parts.room.drain(120)
    row = await d.board.parts.room.store.get(meeting_id)
    assert row is not None and row.decision, row
    return meeting_id


def sabha_cli(config: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The real ``sabha <args> --config <config>`` (this worktree's code)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SABHA_")}
    env.update(PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, "-m", "bot.cli", *args, "--config", str(config)], capture_output=True,
                          text=True, env=env, cwd=str(config.parent), timeout=60, check=False)


async def cli(config: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """:func:`sabha_cli` off the event loop (the daemon runs in this process)."""
    return await asyncio.to_thread(sabha_cli, config, *args)
