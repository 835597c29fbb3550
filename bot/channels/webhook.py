"""Reading a webhook's body safely: the raw bytes (for signatures), with a size limit (413)."""

from __future__ import annotations

from aiohttp import web

__all__ = ["BodyTooLarge", "read_body"]


class BodyTooLarge(Exception):
    """The body is over the route's limit; answer 413."""


async def read_body(request: web.Request, limit: int) -> bytes:
    """The raw body, at most ``limit`` bytes; raises :class:`BodyTooLarge` past it (checked on
    the declared length first, then while reading, so a lying or missing header cannot pass)."""
    declared = request.content_length
    if declared is not None and declared > limit:
        raise BodyTooLarge(f"a body of {declared:,} bytes is over the {limit:,}-byte limit")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.content.iter_chunked(64 * 1024):
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge(f"a body of more than {limit:,} bytes is over the limit")
        chunks.append(chunk)
    return b"".join(chunks)
