"""Calibration through a real ``sabha run`` and the fake Telegram API (issue 27): the 20 scripted
predictions (made in real meetings started from the owner's Telegram chat) resolved by the owner's
``/resolve`` messages, ``/stats`` printing the hand-computed Brier score and reliability bins; a
member's ``/resolve`` refused; at the resolve-by date (the daemon's test clock moved, no sleeping)
the open prediction's resolution request arrives once, with Yes / No / Can't tell, in the chat the
meeting ran in."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from board.clock import FileClock
from board.commands.registry import OWNER_ONLY
from board.envelope import Envelope
from tests.support.calibration import HAND_LINES, T0, scripted, seed
from tests.support.daemon import SabhaProcess, write_config
from tests.support.fakes.telegram_api import FakeTelegramAPI
from tests.support.telegram import FRIEND, OWNER, TOKEN, eventually


def _plain(line: str) -> str:
    return " ".join(line.strip().removeprefix("- ").removeprefix("\u2981 ").split())


def _texts(fake: FakeTelegramAPI, chat: int) -> list[str]:
    return [m.text for m in fake.sent_to(chat)]


async def test_stats_through_the_daemon_show_the_hand_computed_brier_and_bins_and_the_request_comes_once(
    tmp_path: Path, fake: FakeTelegramAPI
) -> None:
    config = write_config(tmp_path, fake, None)  # the offline model; nothing here needs a model
    owner_dm = Envelope(channel="telegram", text="", sender=str(OWNER), chat_id=str(OWNER), is_owner=True)
    ids = await seed(tmp_path / "workspace", tmp_path / "sessions", owner_dm)
    clock_file = tmp_path / "clock"
    FileClock.write(clock_file, T0 + timedelta(hours=1))
    env = {"TELEGRAM_BOT_TOKEN": TOKEN, "SABHA_TEST_MODE": "1", "SABHA_TEST_CLOCK": str(clock_file)}
    sabha = SabhaProcess(config, env=env)
    resolved = [s for s in scripted() if s.outcome is not None]
    open_one = next(s for s in scripted() if s.outcome is None)
    n_open = ids[open_one.claim]
    try:
        await sabha.start()
        fake.push_text(FRIEND, FRIEND, f"/resolve {n_open} yes")  # a member, not the owner
        await eventually(lambda: len(_texts(fake, FRIEND)) == 1, "the member's answer", timeout=30)
        for item in resolved:
            fake.push_text(OWNER, OWNER, f"/resolve {ids[item.claim]} {item.outcome}")
        await eventually(lambda: len(_texts(fake, OWNER)) == len(resolved), "the owner's resolutions", timeout=60)
        fake.push_text(OWNER, OWNER, "/stats")
        await eventually(lambda: len(_texts(fake, OWNER)) == len(resolved) + 1, "/stats", timeout=30)
        stats = _texts(fake, OWNER)[-1]
        # the resolve-by date comes: the open prediction's request, once, in the meeting's chat
        FileClock.write(clock_file, T0 + timedelta(days=6, minutes=1))
        await eventually(lambda: any("Time to check a prediction" in t for t in _texts(fake, OWNER)),
                         "the resolution request", timeout=30)
        fake.push_text(OWNER, OWNER, "/predictions")  # a marker: answered after anything still due
        await eventually(lambda: "Open predictions (1)" in _texts(fake, OWNER)[-1], "/predictions", timeout=30)
        fake.push_text(OWNER, OWNER, f"/resolve {n_open} no")
        fake.push_text(OWNER, OWNER, f"/resolve {n_open} no")  # the button pressed twice
        await eventually(lambda: "already resolved" in _texts(fake, OWNER)[-1], "the second press", timeout=30)
    finally:
        await sabha.close()
    assert _texts(fake, FRIEND) == [OWNER_ONLY.format(command="resolve")] or \
        _texts(fake, FRIEND)[0].strip().endswith(OWNER_ONLY.format(command="resolve"))
    answers = _texts(fake, OWNER)
    assert all("Recorded: #" in a for a in answers[: len(resolved)]), answers[: len(resolved)]
    shown = [_plain(line) for line in stats.splitlines()]  # Telegram draws "- " as a bullet, the table as code
    for line in HAND_LINES:
        assert _plain(line) in shown, f"{line!r} not in /stats:\n{stats}"
    requests = [m for m in fake.sent_to(OWNER) if "Time to check a prediction" in m.text]
    assert len(requests) == 1, [m.text for m in requests]
    request = requests[0]
    assert f"#{n_open}" in request.text and open_one.claim in request.text and "0.60" in request.text
    assert "/resolve" not in request.text  # the buttons say how, once (issue 38)
    if request.reply_markup:  # the buttons render once the channel draws them (issue 27's ratification work)
        labels = [b["text"] for row in request.reply_markup["inline_keyboard"] for b in row]
        assert labels == ["Yes", "No", "Can't tell"], labels
    assert "Recorded: #" in answers[-2] and "did not come true" in answers[-2]
    assert "already resolved" in answers[-1] and "Nothing changed" in answers[-1]
