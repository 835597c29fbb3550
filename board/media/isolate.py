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

Pictures are decoded and scaled the same way (:func:`board.media.images.ready_isolated`:
:func:`run_child` on ``python -m board.media.images``): a 7000x7000 RGBA PNG is 190 KB on the wire and 196 MB
decoded, and Pillow's buffers, freed in the daemon's own process, stayed in its heap (measured:
four pictures at once took the daemon to 1 GB, and it stayed near 2 GB after 32). In a child
the memory goes back to the system when it exits, and ``media.image_memory_mb`` is its ceiling:
a picture that needs more is refused in one sentence. The child writes the model-ready copy to
a file the daemon names; only that small copy comes back.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import resource
import sys
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from board.media.extract import Extracted, ExtractLimits, extract
from board.media.problems import MediaProblem, Problem
from board.media.sniff import DocFormat

__all__ = ["CHILD_MEMORY_BYTES", "child_answer", "child_main", "extract_isolated", "limit_myself", "run_child"]

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
    job = {"task": "document", "path": str(path), "format": fmt.value, "label": label, "limits": asdict(limits),
           "cpu_s": int(timeout_s) + 2, "memory": CHILD_MEMORY_BYTES}
    late = (f"{label} took longer than {timeout_s:g} s to read and was given up (it may be damaged or built to "
            "stall readers); send a smaller or simpler file, e.g. the PDF printed again")
    out, err, code = await run_child("board.media.isolate", job, timeout_s, late)
    return _result(out, err, code, label)


async def run_child(module: str, job: dict[str, Any], timeout_s: float, late: str) -> tuple[bytes, bytes, int | None]:
    """Run ``python -m <module>`` on ``job`` (JSON on its stdin): (stdout, the tail of stderr, exit code);
    killed after ``timeout_s`` (then ``MediaProblem(UNREADABLE, late)``)."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", module, stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=_child_env())
    try:
        async with asyncio.timeout(timeout_s):
            out, err = await _talk(process, json.dumps(job).encode())
    except TimeoutError:
        raise MediaProblem(Problem.UNREADABLE, late) from None
    finally:
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await process.wait()
    return out, err, process.returncode


async def _talk(process: asyncio.subprocess.Process, job: bytes) -> tuple[bytes, bytes]:
    """Give the child its job; its answer (stdout) and the last :data:`_STDERR_KEEP` bytes of its stderr
    (a child may write without end there: only the tail is kept, not all of it as ``communicate`` would)."""
    assert process.stdin is not None and process.stdout is not None and process.stderr is not None
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # a child that died before reading
        process.stdin.write(job)
        await process.stdin.drain()
    process.stdin.close()
    out, err, _ = await asyncio.gather(process.stdout.read(), _tail(process.stderr, _STDERR_KEEP), process.wait())
    return out, err


async def _tail(stream: asyncio.StreamReader, keep: int) -> bytes:
    kept = b""
    while chunk := await stream.read(64 * 1024):
        kept = (kept + chunk)[-keep:]
    return kept


def child_answer(out: bytes) -> dict[str, Any]:
    """The child's one JSON answer ({} when it wrote none: it died)."""
    try:
        message = json.loads(out) if out else {}
    except ValueError:
        return {}
    return message if isinstance(message, dict) else {}


def _result(out: bytes, err: bytes, code: int | None, label: str) -> Extracted:
    message = child_answer(out)
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


def limit_myself(cpu_s: int, memory: int) -> None:
    """The child's ceilings: ``memory`` bytes of address space, ``cpu_s`` of CPU time."""
    with contextlib.suppress(ValueError, OSError):  # a platform without limits: the parent's timeout remains
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s + 1))


def _document(job: dict[str, Any]) -> dict[str, Any]:
    result = extract(Path(job["path"]), DocFormat(job["format"]), str(job["label"]), ExtractLimits(**job["limits"]))
    return {"ok": True, "text": result.text, "truncated": result.truncated}


def child_main(handler: Callable[[dict[str, Any]], dict[str, Any]]) -> int:
    """A reader child: read one job (JSON) on stdin, limit itself, write ``handler``'s answer (JSON) on
    stdout: its result, ``{"problem"}`` (said to the sender), ``{"memory": true}`` (out of memory) or
    ``{"error"}`` (a failure on our side, logged by the parent)."""
    job = json.loads(sys.stdin.buffer.read())
    limit_myself(int(job["cpu_s"]), int(job.get("memory") or CHILD_MEMORY_BYTES))
    answer: dict[str, Any]
    try:
        answer = handler(job)
    except MediaProblem as exc:
        answer = {"problem": exc.problem.value, "text": exc.text}
    except MemoryError:
        answer = {"memory": True}
    except BaseException as exc:  # noqa: BLE001 - told to the parent, which logs it
        answer = {"error": f"{type(exc).__name__}: {exc}"}
    sys.stdout.write(json.dumps(answer))
    sys.stdout.flush()
    return 0


def main() -> int:
    """The document reader child (:func:`child_main`)."""
    return child_main(_document)


if __name__ == "__main__":
    raise SystemExit(main())
