"""The test infrastructure itself: no ``sabha`` process outlives the test that started it (a failed start,
a test that forgets to end its daemon, a bare subprocess), and on CI a missing real part fails instead of
skipping. Each runs the real thing: a real ``sabha run`` against the fake Telegram, or a real inner pytest run
on a small test file with this checkout's tests/conftest.py."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.ci import on_ci
from tests.support.daemon import SabhaProcess, write_config
from tests.support.fakes.telegram_api import FakeTelegramAPI
from tests.support.process import sabha_leftovers

REPO = Path(__file__).resolve().parents[2]


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


def _end(pid: int) -> None:
    if _alive(pid):
        os.kill(pid, signal.SIGKILL)


async def test_a_start_that_fails_kills_the_daemon(tmp_path: Path, fake: FakeTelegramAPI) -> None:
    """The test gives up on the start (here: cancelled once the process exists; elsewhere: its bound passed): the
    process must not be left running behind the error."""
    sabha = SabhaProcess(write_config(tmp_path, fake, None))
    starting = asyncio.create_task(sabha.start())
    while sabha.proc is None and not starting.done():  # noqa: ASYNC110 - until the process exists
        await asyncio.sleep(0.005)
    assert sabha.proc is not None and not starting.done(), "it started before the test could give up on it"
    starting.cancel()  # what a bound passing does
    with pytest.raises(asyncio.CancelledError):
        await starting
    pid = sabha.proc.pid
    try:
        assert await _gone(pid), f"sabha run (pid {pid}) still running after its start failed"
    finally:
        _end(pid)
        await sabha.close()


async def _gone(pid: int) -> bool:
    """Whether ``pid`` is gone within a few seconds (a kill sent before the error lands in a moment; a process
    nobody killed is still there)."""
    for _ in range(50):
        if not _alive(pid):
            return True
        await asyncio.sleep(0.1)
    return False


INNER_LEAVES_RUNNING = '''
import asyncio, os, sys
from pathlib import Path
from tests.support.daemon import DAEMON_REPO, SabhaProcess, write_config
from tests.support.telegram import TOKEN

async def test_forgets_its_daemon(tmp_path, fake):
    sabha = await SabhaProcess(write_config(tmp_path, fake, None)).start()
    Path(os.environ["PIDS"], "registered").write_text(str(sabha.proc.pid))

async def test_forgets_a_bare_process(tmp_path, fake):
    config = write_config(tmp_path, fake, None)
    env = {**os.environ, "PYTHONPATH": str(DAEMON_REPO), "TELEGRAM_BOT_TOKEN": TOKEN}
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "bot.cli", "run", "--config", str(config),
                                                env=env, stderr=asyncio.subprocess.DEVNULL)
    Path(os.environ["PIDS"], "bare").write_text(str(proc.pid))
    await fake.wait_for_call("getMe", timeout=300)
'''


def _inner_pytest(tmp_path: Path, source: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run pytest on ``source`` (a test file) with this checkout's tests/conftest.py, in a subprocess."""
    folder = tmp_path / "inner"
    folder.mkdir()
    (folder / "test_inner.py").write_text(source, encoding="utf-8")
    full = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_XDIST", "CI"))}
    full.update(env, PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider", "-p", "no:xdist",
                           "-p", "tests.conftest", "-o", "asyncio_mode=auto",
                           "-o", "asyncio_default_fixture_loop_scope=function", "-W", "default", f"--rootdir={folder}",
                           str(folder / "test_inner.py")],
                          cwd=REPO, env=full, capture_output=True, text=True, timeout=600)


def test_a_daemon_a_test_leaves_running_is_killed_when_the_test_ends(tmp_path: Path) -> None:
    """Two tests that start a real ``sabha run`` and end without stopping it (a SabhaProcess, a bare subprocess):
    when each test ends its daemon is gone, and the run says so."""
    pids = tmp_path / "pids"
    pids.mkdir()
    done = _inner_pytest(tmp_path, INNER_LEAVES_RUNNING, {"PIDS": str(pids)})
    left = {name: int((pids / name).read_text()) for name in ("registered", "bare") if (pids / name).exists()}
    try:
        assert set(left) == {"registered", "bare"}, done.stdout + done.stderr
        running = [f"{name} (pid {pid})" for name, pid in left.items() if _alive(pid)]
        assert not running, f"still running after the inner test run ended: {running}\n{done.stdout}"
        assert "the test left these running; killed" in done.stdout, done.stdout
    finally:
        for pid in left.values():
            _end(pid)


INNER_NEEDS_A_BROWSER = '''
from tests.support.browser import browser  # noqa: F401

def test_needs_a_browser(browser):
    assert browser
'''


@pytest.mark.parametrize("ci", ["true", ""])
def test_on_ci_a_missing_real_part_fails_instead_of_skipping(tmp_path: Path, ci: str) -> None:
    """chromedriver missing (pointed elsewhere): skipped with the reason on a developer's machine, failed with
    it on CI (``CI=true``), so a broken install fails the build."""
    done = _inner_pytest(tmp_path, INNER_NEEDS_A_BROWSER,
                         {"CI": ci, "SABHA_CHROMEDRIVER": str(tmp_path / "no-chromedriver")})
    out = done.stdout + done.stderr
    if ci:
        assert "1 error" in out and "no chromedriver at" in out and done.returncode == 1, out
    else:
        assert "1 skipped" in out and "no chromedriver at" in out and done.returncode == 0, out


def test_what_counts_as_ci() -> None:
    assert on_ci({"CI": "true"}) and on_ci({"CI": "1"}) and on_ci({"CI": "yes"})
    assert not on_ci({}) and not on_ci({"CI": ""}) and not on_ci({"CI": "false"}) and not on_ci({"CI": "0"})


async def test_this_session_has_no_sabha_process_of_an_earlier_test() -> None:
    """What the session-end check looks at, mid-run: every daemon an earlier test started in this process is gone
    (the per-test fixture ended it; a killed one may take a moment to go)."""
    for _ in range(300):
        left = sabha_leftovers()
        if not left:
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"still running: {left}")
