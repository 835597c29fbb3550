"""Document extraction in a child process that is killed when it takes too long.

pypdf, python-docx and openpyxl are pure Python: a crafted file can keep them busy for
ever or make them allocate gigabytes, and a thread cannot be stopped. So each extraction
runs in a child interpreter (``python -m board.media.isolate``) with ``extract_timeout_s``
(then it is killed), a memory ceiling (``RLIMIT_AS``) and a CPU-time limit (which also ends
it if the daemon dies first), and an environment without the daemon's secrets. The daemon
only awaits the child's pipe: its loop never blocks.

Why a fresh interpreter and not a ``multiprocessing`` pool or forkserver: forking the daemon
itself is unsafe (it runs threads: aiosqlite, the express writer), ``spawn`` and
``forkserver`` children re-run the parent's ``__main__`` (the ``sabha`` script, pytest ...)
and need the parent's import path handed over, and a pool cannot kill one stuck task
without breaking itself. The price, measured on the shared 2-core test machine: a child
reading a small text file takes 0.2-0.3 s, a DOCX 0.27-0.5 s (Python, :mod:`board.media`
and the one parser it imports), against 1 ms and 12 ms in the daemon's own process and
17 ms for a forkserver child (after 0.64 s to start the server). Paid once per document
(its text is then cached by blob), it is small beside the model call that follows, and it
buys a reader that is always killed on time.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import resource
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from board.media.extract import Extracted, ExtractLimits, extract
from board.media.problems import MediaProblem, Problem
from board.media.sniff import DocFormat

__all__ = ["CHILD_MEMORY_BYTES", "extract_isolated"]

log = logging.getLogger("sabha.media")

CHILD_MEMORY_BYTES = 1024 * 1024 * 1024  # address space of one extraction (Python + a parser + the document)
_ROOT = Path(__file__).resolve().parents[2]  # the folder holding the ``board`` package
_STDERR_KEEP = 2000


#: The only environment a reader gets: it parses hostile files, so no API key or token reaches it.
_CHILD_ENV_KEYS = ("PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "VIRTUAL_ENV", "PYTHONHASHSEED")


def _child_env() -> dict[str, str]:
    env = {key: os.environ[key] for key in _CHILD_ENV_KEYS if key in os.environ}
    paths = [str(_ROOT), *[p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


async def extract_isolated(path: Path, fmt: DocFormat, label: str, limits: ExtractLimits, *,
                           timeout_s: float) -> Extracted:
    """:func:`board.media.extract.extract` in a child process killed after ``timeout_s``.

    Raises :class:`MediaProblem`: the child's own (encrypted, damaged, a bomb), or
    ``UNREADABLE`` when it ran out of time or memory or died."""
    job = json.dumps({"path": str(path), "format": fmt.value, "label": label, "limits": asdict(limits),
                      "cpu_s": int(timeout_s) + 2}).encode()
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "board.media.isolate", stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=_child_env())
    try:
        async with asyncio.timeout(timeout_s):
            out, err = await process.communicate(job)
    except TimeoutError:
        raise MediaProblem(Problem.UNREADABLE, f"{label} took longer than {timeout_s:g} s to read and was given "
                           "up (it may be damaged or built to stall readers); send a smaller or simpler file, "
                           "e.g. the PDF printed again") from None
    finally:
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await process.wait()
    return _result(out, err, process.returncode, label)


def _result(out: bytes, err: bytes, code: int | None, label: str) -> Extracted:
    try:
        message: dict[str, Any] = json.loads(out) if out else {}
    except ValueError:
        message = {}
    if message.get("ok") is True:
        return Extracted(str(message["text"]), bool(message.get("truncated")))
    if message.get("problem") in set(Problem):
        raise MediaProblem(Problem(message["problem"]), str(message["text"]))
    log.warning("media: reading %s: the reader ended with code %s: %s", label, code,
                err.decode("utf-8", "replace")[-_STDERR_KEEP:].strip() or message.get("error"))
    if message.get("error"):
        raise MediaProblem(Problem.UNREADABLE, f"{label} could not be read (an error on our side; it was logged)")
    raise MediaProblem(Problem.UNREADABLE, f"{label} could not be read: reading it needed more memory or time "
                       "than a document may use; send a smaller or simpler file")


def _limit_myself(cpu_s: int) -> None:
    with contextlib.suppress(ValueError, OSError):  # a platform without limits: the parent's timeout remains
        resource.setrlimit(resource.RLIMIT_AS, (CHILD_MEMORY_BYTES, CHILD_MEMORY_BYTES))
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s + 1))


def main() -> int:
    """The child: read one job (JSON) on stdin, write one answer (JSON) on stdout."""
    job = json.loads(sys.stdin.buffer.read())
    _limit_myself(int(job["cpu_s"]))
    answer: dict[str, Any]
    try:
        result = extract(Path(job["path"]), DocFormat(job["format"]), str(job["label"]),
                         ExtractLimits(**job["limits"]))
        answer = {"ok": True, "text": result.text, "truncated": result.truncated}
    except MediaProblem as exc:
        answer = {"problem": exc.problem.value, "text": exc.text}
    except BaseException as exc:  # noqa: BLE001 - told to the parent, which logs it
        answer = {"error": f"{type(exc).__name__}: {exc}"}
    sys.stdout.write(json.dumps(answer))
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
