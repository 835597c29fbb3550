"""The owner's web pages, served by the daemon's own aiohttp server at ``/ui/``.

- :mod:`bot.web.app`: the sub-application (:func:`bot.web.app.mount_web`), its middlewares
- :mod:`bot.web.context`: :class:`~bot.web.context.WebContext` and its typed lookup ``context_of``
- :mod:`bot.web.auth`: login links, the signed session cookie, CSRF, the ``owner_required`` guard
- :mod:`bot.web.feed`: every meeting's events numbered per meeting (the SSE ids), kept while it matters
- :mod:`bot.web.view`: neutral view models of a meeting (statements, stances, scoreboard, decision)
- :mod:`bot.web.pages`: the pages; :mod:`bot.web.stream`: the live meeting stream (SSE)
- :mod:`bot.web.render`: the Jinja2 environment (autoescape; not the prompt one), Markdown, the SVG chart
- :mod:`bot.web.config` / :mod:`bot.web.settings`: config ``web`` and its plain settings

This module imports nothing heavy: the config loads :mod:`bot.web.config` on every command.
"""

__all__: list[str] = []
