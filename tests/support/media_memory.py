"""Helpers for measuring what pictures cost the daemon: a large PNG that is small on the wire,
copies of it with other bytes, and a process's resident memory (used by tests/board/media/test_media_memory.py
and benchmarks/image_memory.py)."""

from __future__ import annotations

import io
import struct
import zlib
from pathlib import Path

from PIL import Image

__all__ = ["big_png", "numbered", "rss"]


def big_png(side: int) -> bytes:
    """A ``side`` x ``side`` RGBA PNG of one colour (about 190 KB at 7000 px; ``side``² x 4 bytes decoded)."""
    out = io.BytesIO()
    Image.new("RGBA", (side, side), (30, 120, 200, 255)).save(out, "PNG")
    return out.getvalue()


def numbered(png: bytes, n: int) -> bytes:
    """``png`` with a ``tEXt`` chunk saying ``n`` after its header: other bytes (another blob), the same pixels."""
    body = b"Comment\x00" + f"picture {n}".encode()
    chunk = struct.pack(">I", len(body)) + b"tEXt" + body + struct.pack(">I", zlib.crc32(b"tEXt" + body))
    head = 8 + 25  # the signature and the IHDR chunk
    return png[:head] + chunk + png[head:]


def rss(pid: int) -> dict[str, float]:
    """``VmRSS`` (resident now) and ``VmHWM`` (its peak) of ``pid``, in MB."""
    found: dict[str, float] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            found[key] = int(value.split()[0]) / 1024
    return found
