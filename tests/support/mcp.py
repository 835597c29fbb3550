"""The MCP servers the outside-tools tests drive for real, found where they are installed, and what they work on.

- ``mcp-server-time`` and ``mcp-server-git`` (PyPI, the test extra): next to this Python.
- ``@modelcontextprotocol/server-filesystem`` and ``server-everything`` (npm): ``.ci/run`` installs them into
  ``.mcp-servers/`` at the repository's root; ``$SABHA_MCP_NPM_DIR`` names another folder holding their
  ``node_modules`` (a developer's own install).
- our small fake (``tests/support/fakes/mcp_server.py``): a hanging, crashing, flooding and injecting tool.

A server that is missing skips the test on a developer's machine and FAILS it on CI
(:func:`tests.support.ci.missing_part`).
:func:`everything_http` runs ``server-everything streamableHttp`` on a free port of 127.0.0.1 and ends it after.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

from board.tools.mcp import ServerSpec
from tests.support.ci import missing_part

__all__ = ["REPO", "everything_http", "fake_http", "fake_spec", "free_port", "git_repo", "hostile_spec", "npm_server",
           "python_server", "server_pids"]

REPO = Path(__file__).resolve().parents[2]
_FAKES = Path(__file__).resolve().parent / "fakes"


def python_server(name: str) -> str:
    """The path of a PyPI server's command (``mcp-server-time``, ``mcp-server-git``)."""
    path = Path(sys.executable).parent / name
    if not path.exists():
        missing_part(f"{name} is not installed next to {sys.executable}: pip install -e '.[test]'")
    return str(path)


def npm_server(name: str) -> str:
    """The path of an npm server's command (``mcp-server-filesystem``, ``mcp-server-everything``)."""
    folders = [Path(os.environ["SABHA_MCP_NPM_DIR"])] if os.environ.get("SABHA_MCP_NPM_DIR") else []
    folders.append(REPO / ".mcp-servers")
    for folder in folders:
        path = folder / "node_modules" / ".bin" / name
        if path.exists():
            return str(path)
    return missing_part(f"{name} (npm) is not installed in {' or '.join(map(str, folders))}: run .ci/run, or "
                        "npm install --prefix .mcp-servers @modelcontextprotocol/server-filesystem "
                        "@modelcontextprotocol/server-everything")


def fake_spec(name: str = "fake", **kw: object) -> ServerSpec:
    """Our fake server (stdio), run from this checkout."""
    return ServerSpec(name, command=sys.executable, args=("-m", "tests.support.fakes.mcp_server"), cwd=str(REPO),
                      **kw)  # type: ignore[arg-type]


def hostile_spec(name: str = "bad", **kw: object) -> ServerSpec:
    """Our fake server with its ``--hostile`` tools (stdio): bad names and schemas, an error that injects, tools
    that append to ``$FAKE_MCP_OUT`` (passed through)."""
    return ServerSpec(name, command=sys.executable, args=("-m", "tests.support.fakes.mcp_server", "--hostile"),
                      cwd=str(REPO), env=("FAKE_MCP_OUT",), **kw)  # type: ignore[arg-type]


def git_repo(path: Path, message: str) -> Path:
    """A throwaway git repository at ``path`` whose last commit says ``message``."""
    path.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "GIT_AUTHOR_NAME": "Asha", "GIT_AUTHOR_EMAIL": "asha@example.org",
           "GIT_COMMITTER_NAME": "Asha", "GIT_COMMITTER_EMAIL": "asha@example.org"}
    subprocess.run(["git", "init", "-q", str(path)], check=True, env=env)
    (path / "README").write_text("hello\n", encoding="utf-8")
    subprocess.run(["git", "-C", str(path), "add", "README"], check=True, env=env)
    subprocess.run(["git", "-C", str(path), "commit", "-q", "-m", "first commit"], check=True, env=env)
    (path / "README").write_text("hello again\n", encoding="utf-8")
    subprocess.run(["git", "-C", str(path), "commit", "-q", "-am", message], check=True, env=env)
    return path


def free_port() -> int:
    """A port of 127.0.0.1 free now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.asynccontextmanager
async def everything_http(timeout: float = 120.0) -> AsyncIterator[str]:
    """``server-everything streamableHttp`` listening on 127.0.0.1 only (a preload pins the host); yields its URL."""
    command = npm_server("mcp-server-everything")
    port = free_port()
    env = {**os.environ, "PORT": str(port),
           "NODE_OPTIONS": f"--require {_FAKES / 'listen_local.cjs'}"}
    proc = await asyncio.create_subprocess_exec(command, "streamableHttp", env=env, stdout=asyncio.subprocess.DEVNULL,
                                                stderr=asyncio.subprocess.DEVNULL, start_new_session=True)
    try:
        await _listening(proc, port, timeout)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, 9)
        await proc.wait()


@contextlib.asynccontextmanager
async def fake_http(token: str | None = None, timeout: float = 120.0) -> AsyncIterator[str]:
    """Our fake over streamable HTTP on a free port of 127.0.0.1 (only for ``Bearer <token>`` when given); its URL."""
    port = free_port()
    env = {**os.environ, **({"FAKE_MCP_TOKEN": token} if token else {})}
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "tests.support.fakes.mcp_server", "--http",
                                                str(port), cwd=REPO, env=env, stdout=asyncio.subprocess.DEVNULL,
                                                stderr=asyncio.subprocess.DEVNULL, start_new_session=True)
    try:
        await _listening(proc, port, timeout)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, 9)
        await proc.wait()


async def _listening(proc: asyncio.subprocess.Process, port: int, timeout: float) -> None:
    async with asyncio.timeout(timeout):  # a bound for a hung start only
        while True:
            if proc.returncode is not None:
                raise RuntimeError(f"the server exited with {proc.returncode} before listening on {port}")
            with contextlib.suppress(OSError):
                _, writer = await asyncio.open_connection("127.0.0.1", port)
                writer.close()
                return
            await asyncio.sleep(0.1)


def server_pids(parent: int) -> list[int]:
    """The processes whose parent is ``parent`` (Linux: /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, IndexError, ValueError):
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) == parent:
                found.append(int(stat.parent.name))
    return found
