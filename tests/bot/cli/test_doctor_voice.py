"""``sabha doctor`` warns when a channel that receives voice notes (Telegram, WhatsApp) is on and no
transcriber is set (``media.transcribe_model``): every voice note there would be answered "I can't listen to
voice notes here" (issue 36, item 14). A warning, not a failure: a board may choose not to listen."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.cli.main import main
from tests.support.telegram import OWNER, TOKEN

TELEGRAM = ["telegram:", "  token: ${TELEGRAM_BOT_TOKEN}", f"  allowed_user_ids: [{OWNER}]"]


def doctor(root: Path, capsys: pytest.CaptureFixture[str], *lines: str) -> tuple[int, str]:
    main(["init", str(root)])
    config = root / "sabha.yaml"
    config.write_text("workspace: ./workspace\ndata_dir: ./sessions\n" + "\n".join(lines) + "\n", encoding="utf-8")
    capsys.readouterr()
    code = main(["doctor", "--offline", "--config", str(config)])
    return code, capsys.readouterr().out


def test_a_voice_channel_without_a_transcriber_is_warned_about(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", TOKEN)
    code, out = doctor(tmp_path, capsys, *TELEGRAM)
    assert code == 0, out
    assert "WARN  voice notes: telegram is on and no transcriber is set (media.transcribe_model)" in out, out
    assert "fix: set media.transcribe_model, e.g. openai:gpt-4o-mini-transcribe" in out


def test_with_a_transcriber_or_no_voice_channel_nothing_is_said(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", TOKEN)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    _, out = doctor(tmp_path / "a", capsys, *TELEGRAM, "media:", "  transcribe_model: openai:gpt-4o-mini-transcribe")
    assert "voice notes" not in out, out
    _, out = doctor(tmp_path / "b", capsys)  # the terminal alone: a file is sent on purpose, the board says why
    assert "voice notes" not in out, out
