"""The owner's web pages refuse everyone else: no cookie, a forged or expired one, a reused or
expired link, a POST without its CSRF token; bad input gets a clear page and starts nothing.

A real daemon (:class:`bot.daemon.Daemon` with its aiohttp server) in this process, a plain
aiohttp client, links from the real ``sabha web link``; no browser needed.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest
from aiohttp import ClientSession

from board.clock import FakeClock
from bot.web.auth import COOKIE
from tests.support.browser import WebDaemon

PAGES = ["/ui/", "/ui/sessions", "/ui/sessions/nope", "/ui/meetings", "/ui/meetings/new", "/ui/meetings/m-1",
         "/ui/meetings/m-1/events", "/ui/decisions", "/ui/cost", "/ui/track", "/ui/schedule"]
POSTS = ["/ui/meetings", "/ui/actions/1/done", "/ui/logout", "/ui/track/predictions/1", "/ui/schedule/1/pause"]
HTML = {"Accept": "text/html,application/xhtml+xml"}


def _token(link: str) -> str:
    return link.split("token=", 1)[1]


async def _sign_in(http: ClientSession, base: str, link: str) -> str:
    """Redeem ``link``; the session cookie's value."""
    async with http.post(f"{base}/ui/login", data={"token": _token(link)}, allow_redirects=False) as resp:
        assert resp.status == 303, await resp.text()
        assert resp.headers["Location"] == "/ui/"
        cookie = resp.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/" in cookie, cookie
    value = re.search(rf"{COOKIE}=([^;]+)", cookie)
    assert value is not None
    return value.group(1)


def _csrf(page: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', page)
    assert found, page[:500]
    return found.group(1)


def _nonce(page: str) -> str:
    found = re.search(r'name="nonce" value="([^"]+)"', page)
    assert found, page[:500]
    return found.group(1)


async def test_without_a_login_every_page_is_refused(tmp_path: Path) -> None:
    async with WebDaemon(tmp_path) as d, ClientSession() as http:
        for path in PAGES:
            async with http.get(d.base + path, allow_redirects=False) as resp:
                assert resp.status == 401, path
                assert "sabha web link" in await resp.text()
            async with http.get(d.base + path, headers=HTML, allow_redirects=False) as resp:
                assert resp.status == 303 and resp.headers["Location"] == "/ui/login", path
        for path in POSTS:
            async with http.post(d.base + path, data={"topic": "x"}, allow_redirects=False) as resp:
                assert resp.status == 401, path
        async with http.get(d.base + "/ui/login", headers=HTML) as resp:  # the "ask for a link" page
            assert resp.status == 200 and "sabha web link" in await resp.text()
        async with http.get(d.base + "/ui/static/sabha.css") as resp:  # what the login page needs
            assert resp.status == 200 and resp.content_type == "text/css"
        for path in ("/healthz", "/readyz", "/metrics"):  # their own rules, unchanged
            async with http.get(d.base + path) as resp:
                assert resp.status == 200, path
        assert not await d.board.parts.room.store.list()


async def test_a_link_signs_in_once(tmp_path: Path) -> None:
    async with WebDaemon(tmp_path) as d, ClientSession() as http:
        link = await d.link()
        assert link.startswith(f"{d.base}/ui/login?token=")  # the running daemon's port, from daemon.json
        async with http.get(link, headers=HTML) as resp:  # opening it (a link preview too) does not use it up
            assert resp.status == 200 and 'id="sign-in"' in await resp.text()
        cookie = await _sign_in(http, d.base, link)
        async with http.get(d.base + "/ui/", headers={**HTML, "Cookie": f"{COOKIE}={cookie}"}) as resp:
            page = await resp.text()
            assert resp.status == 200 and "The board" in page and "Critic" in page
            assert "script-src 'self'" in resp.headers["Content-Security-Policy"]
            assert resp.headers["Referrer-Policy"] == "no-referrer"
        async with http.post(f"{d.base}/ui/login", data={"token": _token(link)}, headers=HTML,
                             allow_redirects=False) as resp:  # replayed
            assert resp.status == 403 and "used already" in await resp.text()
            assert "Set-Cookie" not in resp.headers
        async with http.post(f"{d.base}/ui/login", data={"token": "made-up"}, headers=HTML,
                             allow_redirects=False) as resp:
            assert resp.status == 403 and "not one Sabha made" in await resp.text()


async def test_forged_and_expired_cookies_and_expired_links_are_refused(tmp_path: Path) -> None:
    clock = FakeClock(datetime.now(UTC))
    async with WebDaemon(tmp_path, clock=clock, extra=["web:", "  session_ttl_s: 3600", "  link_ttl_s: 60"]) as d, \
            ClientSession() as http:
        cookie = await _sign_in(http, d.base, await d.link())
        payload, mac = cookie.split(".")
        forged = [f"{payload}.{mac[:-2]}xx", f"{payload[:-2]}AA.{mac}", "garbage", "",
                  # a well-formed cookie signed with another key
                  "eyJzaWQiOiAiQzFEb1NCUnZmQ3E1Y19ocGxxaVZrQSIsICJleHAiOiA5OTk5OTk5OTk5fQ.BcV1RUmAODBx-vVJuQ2ZGPgpwYUcMEwocTQ1TT_4FGY"]
        for value in forged:
            async with http.get(d.base + "/ui/meetings", headers={"Cookie": f"{COOKIE}={value}"},
                                allow_redirects=False) as resp:
                assert resp.status == 401, value
        async with http.get(d.base + "/ui/meetings", headers={"Cookie": f"{COOKIE}={cookie}"}) as resp:
            assert resp.status == 200
        clock.advance(seconds=3601)  # the login's hour is over
        async with http.get(d.base + "/ui/meetings", headers={"Cookie": f"{COOKIE}={cookie}"},
                            allow_redirects=False) as resp:
            assert resp.status == 401
        link = await d.link()  # made now by the CLI (the wall clock); the daemon's clock is an hour ahead
        async with http.post(f"{d.base}/ui/login", data={"token": _token(link)}, headers=HTML,
                             allow_redirects=False) as resp:
            assert resp.status == 403 and "expired" in await resp.text()


async def test_posts_need_the_csrf_token_and_bad_input_starts_nothing(tmp_path: Path) -> None:
    async with WebDaemon(tmp_path) as d, ClientSession() as http:
        jar = {"Cookie": f"{COOKIE}={await _sign_in(http, d.base, await d.link())}"}
        async with http.get(d.base + "/ui/meetings/new", headers={**HTML, **jar}) as resp:
            form = await resp.text()
        csrf, nonce = _csrf(form), _nonce(form)
        good = {"topic": "Should we open an office in Lisbon?", "roster": "board", "rounds": "2", "mode": "parallel"}
        for data in (good, {**good, "csrf": "wrong"}):
            async with http.post(d.base + "/ui/meetings", data=data, headers={**HTML, **jar},
                                 allow_redirects=False) as resp:
                assert resp.status == 403 and "CSRF" in await resp.text()
        bad = [({"topic": "   "}, "Give the meeting a topic"), ({"topic": "x" * 100_000}, "keep it under 2,000"),
               ({"roster": "nosuch"}, "Unknown roster"), ({"rounds": "0"}, "Rounds must be"),
               ({"mode": "shouting"}, "Mode must be")]
        for change, words in bad:
            async with http.post(d.base + "/ui/meetings", data={**good, **change, "csrf": csrf},
                                 headers={**HTML, **jar}, allow_redirects=False) as resp:
                text = await resp.text()
                assert resp.status == 400 and words in text, (change, text[:300])
        assert not await d.board.parts.room.store.list()  # nothing started
        d.model.hold()  # the meeting stays open while the form is sent again
        started = []
        for _ in range(2):  # a double submit of one form
            async with http.post(d.base + "/ui/meetings", data={**good, "csrf": csrf, "nonce": nonce},
                                 headers={**HTML, **jar}, allow_redirects=False) as resp:
                assert resp.status == 303
                started.append(resp.headers["Location"])
        assert started[0] == started[1] and started[0].startswith("/ui/meetings/m-")
        assert len(await d.board.parts.room.store.list()) == 1
        async with http.post(d.base + "/ui/meetings", data={**good, "csrf": csrf, "nonce": "another"},
                             headers={**HTML, **jar}, allow_redirects=False) as resp:  # a second form, same place
            assert resp.status == 409 and "still running" in await resp.text()
        for path in ("/ui/meetings/m-nosuch", "/ui/sessions/nosuch", "/ui/meetings/m-nosuch/events"):
            async with http.get(d.base + path, headers={**HTML, **jar}) as resp:
                assert resp.status == 404, path
                assert "No " in await resp.text()
        async with http.post(d.base + "/ui/actions/999/done", data={"csrf": csrf}, headers={**HTML, **jar},
                             allow_redirects=False) as resp:
            assert resp.status == 404 and "No open action item #999" in await resp.text()
        d.model.release()


async def test_login_attempts_are_rate_limited(tmp_path: Path) -> None:
    async with WebDaemon(tmp_path, extra=["web:", "  login_attempts_per_minute: 3"]) as d, ClientSession() as http:
        statuses = []
        for i in range(5):
            async with http.post(f"{d.base}/ui/login", data={"token": f"guess{i}"}, allow_redirects=False) as resp:
                statuses.append(resp.status)
        assert statuses == [403, 403, 403, 429, 429]
        assert resp.headers["Retry-After"] == "60"
        link = await d.link()  # a good link is never refused (r28: behind a proxy junk would lock the owner out)
        async with http.post(f"{d.base}/ui/login", data={"token": _token(link)}, allow_redirects=False) as resp:
            assert resp.status == 303


@pytest.mark.parametrize("secret", ["short"])
async def test_a_short_secret_is_refused(tmp_path: Path, secret: str) -> None:
    from bot.config.file import ConfigError
    from bot.web.auth import signing_key

    with pytest.raises(ConfigError, match="at least 32"):
        signing_key(tmp_path, {"SABHA_WEB_SECRET": secret})
    key = signing_key(tmp_path, {})
    assert (tmp_path / "web-secret.key").stat().st_mode & 0o777 == 0o600
    assert signing_key(tmp_path, {}) == key  # made once, kept


def test_web_link_says_when_the_pages_are_off(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    from tests.support.browser import REPO, write_web_config

    config = write_web_config(tmp_path, ["web:", "  enabled: false"])
    env = {k: v for k, v in os.environ.items() if not k.startswith("SABHA_")} | {"PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-m", "bot.cli", "web", "link", "--config", str(config)],
                          capture_output=True, text=True, env=env, timeout=60, check=False)
    assert done.returncode == 2 and "web.enabled: false" in done.stderr and not done.stdout
    config.write_text(config.read_text(encoding="utf-8").replace("enabled: false", "enabled: true"), encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "bot.cli", "web", "link", "--config", str(config)],
                          capture_output=True, text=True, env=env, timeout=60, check=False)
    assert done.returncode == 2 and "start `sabha run`" in done.stderr  # port 0 and no daemon: no address yet
    config.write_text(config.read_text(encoding="utf-8").replace("port: 0", "port: 8099"), encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "bot.cli", "web", "link", "--json", "--config", str(config)],
                          capture_output=True, text=True, env=env, timeout=60, check=False)
    out = json.loads(done.stdout)  # no daemon runs: the configured address, and it says so
    assert done.returncode == 0 and out["link"].startswith("http://127.0.0.1:8099/ui/login?token=")
    assert out["daemon_running"] is False and out["expires_in_s"] == 600
