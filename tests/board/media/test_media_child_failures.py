"""What a picture's sender is told when the picture child fails (review finding 2), on real child
processes (``python -m board.media.images`` through :func:`board.media.images.ready_isolated`):

- only a real out-of-memory failure is "too large", and without a config key (the owner's log has it);
- any other failure of the child (it breaks: an error inside, no answer) is logged at ERROR and the
  sender hears it could not be read, an error on our side;
- a failed write of the model-ready copy (a full disk: ``/dev/full`` answers ENOSPC) reaches the
  daemon as the OSError it is, so the media service's disk-trouble path parks and retries the message.
"""

from __future__ import annotations

import errno
import io
import logging
import os
from pathlib import Path

import pytest
from PIL import Image

from board.media.images import ready_isolated
from board.media.problems import MediaProblem
from tests.support.media_memory import big_png

MB = 2**20


def _noise_jpeg(path: Path, side: int = 2000) -> Path:
    """A picture over the model's side, so the child writes a scaled copy."""
    out = io.BytesIO()
    Image.frombytes("RGB", (side, side), os.urandom(side * side * 3)).save(out, "JPEG", quality=30)
    path.write_bytes(out.getvalue())
    return path


async def test_a_real_out_of_memory_is_too_large_without_a_config_key_for_the_sender(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    picture = tmp_path / "big.png"
    picture.write_bytes(big_png(7000))
    with caplog.at_level(logging.INFO, "sabha.media"), pytest.raises(MediaProblem) as told:
        await ready_isolated(picture, tmp_path / "out", max_side=1568, max_pixels=100_000_000, label="your photo",
                             timeout_s=300, memory_bytes=160 * MB)
    assert "too large to read" in told.value.text and "160 MB" in told.value.text
    assert "media." not in told.value.text, told.value.text
    assert "media.image_memory_mb" in caplog.text, caplog.text


async def test_a_child_that_breaks_is_an_error_on_our_side_logged_at_error(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A bug in the child (here a job it cannot read: max_side not a number) is not the sender's picture."""
    picture = _noise_jpeg(tmp_path / "photo.jpg")
    with caplog.at_level(logging.INFO, "sabha.media"), pytest.raises(MediaProblem) as told:
        await ready_isolated(picture, tmp_path / "out", max_side="wide", max_pixels=100_000_000,  # type: ignore[arg-type]
                             label="your photo", timeout_s=300, memory_bytes=1024 * MB)
    assert "too large" not in told.value.text, told.value.text
    assert "could not be read (an error on our side; it was logged)" in told.value.text
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert errors and "ValueError" in errors[0].getMessage(), caplog.text


async def test_a_full_disk_writing_the_copy_reaches_the_daemon_as_enospc(tmp_path: Path) -> None:
    picture = _noise_jpeg(tmp_path / "photo.jpg")
    with pytest.raises(OSError) as raised:
        await ready_isolated(picture, Path("/dev/full"), max_side=1568, max_pixels=100_000_000, label="your photo",
                             timeout_s=300, memory_bytes=1024 * MB)
    assert not isinstance(raised.value, MediaProblem)
    assert raised.value.errno == errno.ENOSPC, raised.value
