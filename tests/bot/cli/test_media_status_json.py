"""``sabha status --json`` says how full the media store is in numbers (review finding 11): files,
bytes, the total quota, what strangers' files take and their quota, not the text lines of the plain
report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from board.app import Board
from bot.app import all_migrations
from bot.config.load import load_config
from tests.bot.cli.test_ops_cli import arun, plain_config


async def test_status_json_gives_the_media_stores_figures(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = plain_config(tmp_path, "media: {quota_total_mb: 4, quota_strangers_mb: 2}")
    loaded = load_config(config)
    board = await Board.open(loaded.board_settings(), migrations=all_migrations())  # the state db exists
    await board.close()
    capsys.readouterr()  # what init wrote
    blob = tmp_path / "sessions" / "media" / "ab" / ("c" * 62)
    blob.parent.mkdir(parents=True)
    blob.write_bytes(b"x" * 2**20)
    _, out, _ = await arun(capsys, "status", "--config", str(config), "--json")
    media = json.loads(out)["media"]
    assert media == {"files": 1, "bytes": 2**20, "quota_total_bytes": 4 * 2**20, "used_percent": 25.0,
                     "text_bytes": 0, "strangers_bytes": 0, "quota_strangers_bytes": 2 * 2**20, "keep_days": 30.0,
                     "full": False}, media
