"""A real browser for the web tests: Debian's headless chromium driven by selenium.

``browser`` is a module-scoped fixture (one browser per test module, not per test): a
:class:`Browser` over chromium through Debian's ``/usr/bin/chromedriver`` (passed explicitly, so
Selenium Manager never downloads a driver). Where chromium, its driver or selenium is missing
the module is skipped with the reason (``.ci/run`` installs them; on CI, ``CI=true``, it fails instead:
tests/support/ci.py). Use it from a test module with
``from tests.support.browser import browser  # noqa: F401``.

:func:`web_link` runs the real ``sabha web link`` for a config and returns the one-time link.
Screenshots go to ``test-artifacts/web/`` (git-ignored; ``$SABHA_TEST_ARTIFACTS`` moves it).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from tests.support.ci import missing_part

__all__ = ["ARTIFACTS", "CHROMEDRIVER", "Browser", "browser", "missing_browser", "web_link"]

REPO = Path(__file__).resolve().parents[2]
CHROMEDRIVER = Path(os.environ.get("SABHA_CHROMEDRIVER", "/usr/bin/chromedriver"))
CHROMIUM = os.environ.get("SABHA_CHROMIUM", "/usr/bin/chromium")
ARTIFACTS = Path(os.environ.get("SABHA_TEST_ARTIFACTS", str(REPO / "test-artifacts"))) / "web"
HEIGHT = 900


def missing_browser() -> str | None:
    """Why the browser tests cannot run here (None: they can)."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e '.[test]')"
    if not CHROMEDRIVER.is_file():
        return f"no chromedriver at {CHROMEDRIVER} (apt-get install chromium chromium-driver; .ci/run does)"
    if not (Path(CHROMIUM).is_file() or shutil.which("chromium")):
        return "no chromium (apt-get install chromium chromium-driver; .ci/run does)"
    return None


class Browser:
    """One headless chromium, with the few steps the web tests repeat."""

    def __init__(self, driver: Any) -> None:
        self.driver = driver
        ARTIFACTS.mkdir(parents=True, exist_ok=True)

    def size(self, width: int, height: int = HEIGHT) -> None:
        """Make the page ``width`` CSS pixels wide (375: a phone; 1280: a desktop)."""
        self.driver.set_window_size(width, height)
        # the window includes no chrome in headless mode, but make sure the viewport is what we asked
        inner = self.driver.execute_script("return window.innerWidth")
        if inner != width:
            self.driver.set_window_size(width + (width - inner), height)

    def shot(self, name: str) -> Path:
        """A full-page screenshot saved as ``test-artifacts/web/<name>.png``."""
        path = ARTIFACTS / f"{name}.png"
        height = self.driver.execute_script("return Math.max(document.body.scrollHeight, 400)")
        width = self.driver.execute_script("return window.innerWidth")
        self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
            "width": width, "height": min(int(height), 6000), "deviceScaleFactor": 1, "mobile": width < 500})
        try:
            self.driver.save_screenshot(str(path))
        finally:
            self.driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
        return path

    def sign_in(self, link: str) -> None:
        """Follow a one-time login link and press Sign in."""
        from selenium.webdriver.common.by import By

        self.driver.get(link)
        self.driver.find_element(By.ID, "sign-in").click()
        self.wait_for("nav[aria-label=Pages]")

    def wait_for(self, css: str, count: int = 1, timeout: float = 60.0) -> list[Any]:
        """Wait until at least ``count`` elements match ``css``; them."""
        from selenium.webdriver.common.by import By

        deadline = time.monotonic() + timeout
        while True:
            found = self.driver.find_elements(By.CSS_SELECTOR, css)
            if len(found) >= count:
                return list(found)
            if time.monotonic() > deadline:
                raise AssertionError(f"{count} x {css!r} did not appear in {timeout} s (found {len(found)}) on "
                                     f"{self.driver.current_url}:\n{self.driver.page_source[:3000]}")
            time.sleep(0.05)

    def texts(self, css: str) -> list[str]:
        """The text of every element matching ``css``."""
        from selenium.webdriver.common.by import By

        return [e.text for e in self.driver.find_elements(By.CSS_SELECTOR, css)]


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """See the module docstring."""
    why = missing_browser()
    if why:
        missing_part(f"no browser for the browser tests: {why}")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--disable-extensions", "--no-first-run", f"--window-size=1280,{HEIGHT}", "--force-color-profile=srgb",
                "--hide-scrollbars"):
        options.add_argument(arg)
    if Path(CHROMIUM).is_file():
        options.binary_location = CHROMIUM
    driver = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=options)
    driver.set_page_load_timeout(30)
    try:
        yield Browser(driver)
    finally:
        driver.quit()


def web_link(config: Path, *extra: str) -> str:
    """The real ``sabha web link --config <config>``: the one-time link it prints."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SABHA_")}
    env.update(PYTHONPATH=str(REPO))
    done = subprocess.run([sys.executable, "-m", "bot.cli", "web", "link", "--config", str(config), *extra],
                          capture_output=True, text=True, env=env, cwd=str(config.parent), timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


# -- a daemon with the web pages, in this process ------------------------------------------------


class GatedModel:
    """The offline model behind a gate, a little slow: :meth:`hold` makes every later model call
    wait until :meth:`release` (a test can stop a meeting halfway however fast the machine is)."""

    name = "offline"

    def __init__(self, delay: float = 0.02) -> None:
        import asyncio

        from board.llm.offline import OfflineProvider

        self.inner = OfflineProvider()
        self.delay = delay
        self.gate = asyncio.Event()
        self.gate.set()
        self.calls = 0

    def hold(self) -> None:
        """From now on model calls wait."""
        self.gate.clear()

    def release(self) -> None:
        """Let them go."""
        self.gate.set()

    async def complete(self, request: Any) -> Any:
        import asyncio

        await self.gate.wait()
        await asyncio.sleep(self.delay)
        self.calls += 1
        return await self.inner.complete(request)


def write_web_config(root: Path, extra: list[str] | None = None) -> Path:
    """A workspace and a sabha.yaml with the offline model, the server on a free port, no channels."""
    from board.workspace.paths import copy_default_workspace

    if not (root / "workspace").exists():
        copy_default_workspace(root / "workspace")
    lines = ["workspace: ./workspace", "data_dir: ./sessions", "server:", "  host: 127.0.0.1", "  port: 0",
             *(extra or [])]
    path = root / "sabha.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


class WebDaemon:
    """``sabha run`` (the real :class:`bot.daemon.Daemon`) in this process, on a :class:`GatedModel`."""

    def __init__(self, root: Path, *, clock: Any = None, extra: list[str] | None = None) -> None:
        self.config = write_web_config(root, extra)
        self.clock = clock
        self.model: GatedModel | None = None
        self.daemon: Any = None
        self._task: Any = None

    @property
    def base(self) -> str:
        """``http://127.0.0.1:<port>``."""
        return f"http://127.0.0.1:{self.daemon.port}"

    @property
    def board(self) -> Any:
        """The running board."""
        return self.daemon.board

    async def __aenter__(self) -> WebDaemon:
        import asyncio

        from bot.app import open_board
        from bot.config.load import load_config
        from bot.daemon import Daemon

        loaded = load_config(self.config, env={})
        board = await open_board(loaded)
        if self.clock is not None:
            board.parts = replace(board.parts, clock=self.clock)
        self.model = GatedModel()
        board.parts.providers.register("offline", lambda: self.model)
        self.daemon = Daemon(loaded, board=board, install_signals=False)
        self._task = asyncio.create_task(self.daemon.run())
        await asyncio.wait_for(self.daemon.ready.wait(), 300)  # a bound only a hung start hits
        self._board = board
        return self

    async def __aexit__(self, *exc: object) -> None:
        import asyncio

        if self.model is not None:
            self.model.release()
        self.daemon.request_stop()
        try:
            assert await asyncio.wait_for(self._task, 120) == 0
        finally:
            await self._board.close()

    async def link(self) -> str:
        """A one-time login link from the real ``sabha web link``."""
        import asyncio

        return await asyncio.to_thread(web_link, self.config)
