"""A soul hard-linked to a file outside the workspace never reaches the model (issue 22, item 8).

Symlinks out of the workspace were refused, but a hard link is a second name for the same
file, so its real path is inside the workspace: it passed. On a real ``sabha run`` (fake
Telegram, a fake OpenAI model that records every prompt) the general agent's SOUL.md is
swapped for a hard link to a file outside the workspace: the next turn is answered with the
last good soul, and the log says why with the same kind of clear error as for a symlink.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

from tests.support.daemon import SabhaProcess, write_config
from tests.support.fakes.openai_api import FakeOpenAI
from tests.support.fakes.telegram_api import FakeTelegramAPI
from tests.support.telegram import OWNER, eventually

GOOD = "GENERAL-SOUL-GOOD-MARKER"
OUTSIDE = "OUTSIDE-THE-WORKSPACE-SECRET-MARKER"


def _system(model: FakeOpenAI, index: int) -> str:
    messages = model.requests[index].json["messages"]
    return "\n".join(str(m.get("content")) for m in messages if m.get("role") == "system")


async def test_a_soul_hard_linked_outside_the_workspace_is_refused_and_the_last_good_stays(
        tmp_path: Path, fake: FakeTelegramAPI, fake_openai: FakeOpenAI) -> None:
    config = write_config(tmp_path, fake, fake_openai)  # type: ignore[arg-type]
    soul = tmp_path / "workspace" / "SOUL.md"
    soul.write_text(soul.read_text(encoding="utf-8") + f"\n{GOOD}\n", encoding="utf-8")
    outside = tmp_path / "outside" / "private-notes.md"
    outside.parent.mkdir()
    outside.write_text(f"# Private\n\n{OUTSIDE}: the owner's private notes, never for a model.\n", encoding="utf-8")
    sabha = SabhaProcess(config)
    dm = {"is_forum": False, "chat_type": "private"}
    try:
        await sabha.start()
        fake.push_text(OWNER, OWNER, "Q1 hello", **dm)  # type: ignore[arg-type]
        await eventually(lambda: len(fake.sent_to(OWNER)) >= 1, "the first answer", timeout=30)
        assert GOOD in _system(fake_openai, -1)

        scratch = soul.with_name("SOUL.md.swap")
        os.link(outside, scratch)  # a second name for the outside file, inside the workspace
        os.replace(scratch, soul)
        assert os.stat(soul).st_nlink == 2 and OUTSIDE in soul.read_text(encoding="utf-8")

        fake.push_text(OWNER, OWNER, "Q2 and now?", **dm)  # type: ignore[arg-type]
        await eventually(lambda: len(fake.sent_to(OWNER)) >= 2, "the second answer", timeout=30)
        second = _system(fake_openai, -1)
        assert OUTSIDE not in second, "the hard-linked file reached the model"
        assert GOOD in second  # the last good version stays live
        line = await sabha.wait_for_log(r"SOUL\.md.*hard link")
        print(f"\nthe log says: {line}")
        assert "outside the workspace" in line and "keeping the last good version live" in line, line
        assert await sabha.signal(signal.SIGTERM) == 0
    finally:
        await sabha.close()
