"""The chat page: a Jinja2 template of the channel's (``templates/chat.html``) that extends the web
pages' ``base.html`` (their navigation, stylesheet and sign-out), rendered in an autoescaped
environment that loads both (not the sandboxed prompt Environment of :mod:`board.workspace.prompt`).
Its script and its layout rules are files served by the chat's routes (the pages' CSP allows only
the daemon's own scripts): ``chat.js`` reads the conversation over SSE and posts messages with a
client id it generates.
"""

from __future__ import annotations

import functools

import jinja2

from bot.channels.web.host import ChatHost

__all__ = ["ASSETS", "asset", "render_page"]

#: The files served under ``/ui/chat/assets/``, with their content types.
ASSETS = {"chat.js": "text/javascript", "chat.css": "text/css"}


@functools.cache
def _environment() -> jinja2.Environment:
    loader = jinja2.ChoiceLoader([jinja2.PackageLoader("bot.channels.web", "templates"),
                                  jinja2.PackageLoader("bot.web", "templates")])
    return jinja2.Environment(loader=loader, autoescape=True, undefined=jinja2.StrictUndefined)


def render_page(channel: ChatHost, advisor: str | None, csrf: str, *, error: str | None = None) -> str:
    """The chat page with ``advisor`` (None: only ``error`` and the list of advisors)."""
    from bot.web.pages import NAV

    advisors = [(role, channel.label(role)) for role in channel.advisors()]
    label = channel.label(advisor) if advisor else ""
    return _environment().get_template("chat.html").render(
        title=f"Chat with {label}" if advisor else "Chat", nav=NAV, active="chat", csrf=csrf, signed_in=True,
        prefix="/ui", advisor=advisor, advisor_label=label, advisors=advisors, error=error,
        max_chars=channel.max_chars)


@functools.cache
def asset(name: str) -> str:
    """The text of asset ``name`` (one of :data:`ASSETS`)."""
    env = _environment()
    assert env.loader is not None and name in ASSETS
    source, _, _ = env.loader.get_source(env, name)
    return source
