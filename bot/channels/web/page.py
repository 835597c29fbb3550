"""The chat page: one Jinja2 template (autoescaped; not the sandboxed prompt Environment of
:mod:`board.workspace.prompt`) with its CSS and vanilla JS inlined, nothing loaded from outside.

The page lists the advisors (a chat per advisor), shows the conversation it reads over SSE
(:mod:`.routes`), and posts messages with a client id it generates; see ``templates/chat.js``.
"""

from __future__ import annotations

import functools

import jinja2

from bot.channels.web.host import ChatHost

__all__ = ["render_page"]


@functools.cache
def _environment() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.PackageLoader("bot.channels.web", "templates"),
                              autoescape=jinja2.select_autoescape(("html", "j2")), undefined=jinja2.StrictUndefined)


def render_page(channel: ChatHost, advisor: str | None, csrf: str, *, error: str | None = None) -> str:
    """The chat page with ``advisor`` (None: only ``error`` and the list of advisors)."""
    env = _environment()
    advisors = [(role, channel.label(role)) for role in channel.advisors()]
    return env.get_template("chat.html.j2").render(
        advisor=advisor, advisor_label=channel.label(advisor) if advisor else "", advisors=advisors, csrf=csrf,
        error=error, max_chars=channel.max_chars, css=_asset("chat.css"), js=_asset("chat.js"))


@functools.cache
def _asset(name: str) -> str:
    env = _environment()
    assert env.loader is not None
    source, _, _ = env.loader.get_source(env, name)
    return source
