"""A reader child's stderr is not read whole into the daemon (review finding 7): a child that writes
200 MB to stderr before it answers leaves only its last lines in the daemon's memory. The child is
this module run as ``python -m tests.board.media.test_media_child_stderr`` through the real
:func:`board.media.isolate.run_child`."""

from __future__ import annotations

import json
import resource
import sys

from board.media.isolate import child_answer, run_child

NOISE_MB = 200


async def test_a_child_that_floods_stderr_does_not_grow_the_daemon() -> None:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out, err, code = await run_child("tests.board.media.test_media_child_stderr", {"mb": NOISE_MB}, 600, "late")
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 - before
    assert code == 0 and child_answer(out) == {"ok": True}, (code, out[:200])
    assert len(err) <= 4000 and err.rstrip().endswith(b"the last line"), err[-200:]
    assert grown < NOISE_MB / 2, f"the parent's peak grew by {grown:.0f} MB reading the child's stderr"


def _flood() -> None:
    job = json.loads(sys.stdin.buffer.read())
    line = b"x" * 1023 + b"\n"
    for _ in range(int(job["mb"]) * 1024):
        sys.stderr.buffer.write(line)
    sys.stderr.buffer.write(b"the last line\n")
    sys.stderr.flush()
    sys.stdout.write(json.dumps({"ok": True}))


if __name__ == "__main__":
    _flood()
