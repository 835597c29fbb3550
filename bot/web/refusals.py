"""The pages' HTTP refusals and what their error page may render of them.

A refusal's text often quotes the request (``No meeting '[x](//evil.example)'``): the error page shows it as
plain text, never as Markdown, so nothing from a URL becomes a link, an image or emphasis on the owner's page.
Only a refusal's fixed words, given apart as its *hint* (:func:`refusal`, read back with :func:`hint_of`), are
rendered as inline Markdown (a command in backticks becomes code).
"""

from __future__ import annotations

from typing import Any, TypeVar

from aiohttp import web

__all__ = ["hint_of", "refusal", "said_of"]

_SAID = web.ResponseKey("sabha_refusal_said", str)
_HINT = web.ResponseKey("sabha_refusal_hint", str)
E = TypeVar("E", bound=web.HTTPException)


def refusal(kind: type[E], *, said: str = "", hint: str = "", **kwargs: Any) -> E:
    """An HTTP refusal of ``kind``: ``said`` (may quote the request: plain text) then ``hint`` (the daemon's own
    words: inline Markdown on the error page); its body for anything but a page is both, as written."""
    exc = kind(text=" ".join(part for part in (said, hint) if part), **kwargs)
    exc[_SAID] = said
    exc[_HINT] = hint
    return exc


def said_of(exc: web.HTTPException) -> str:
    """What the error page shows of ``exc`` as plain text: its ``said``, else its whole text or reason."""
    return str(exc.get(_SAID, exc.text or exc.reason))


def hint_of(exc: web.HTTPException) -> str:
    """The fixed words of ``exc`` the error page renders as inline Markdown ("" for any other refusal)."""
    return str(exc.get(_HINT, ""))
