"""The owner's web pages, served by the daemon's own aiohttp server at ``/ui/``.

- :mod:`bot.web.app`: the sub-application (:func:`bot.web.app.mount_web`), its middlewares
- :mod:`bot.web.context`: :class:`~bot.web.context.WebContext` and its typed lookup ``context_of``
- :mod:`bot.web.auth`: login links, the signed session cookie, CSRF, the ``owner_required`` guard
- :mod:`bot.web.meeting_feed`: every meeting's events numbered per meeting (the SSE ids), kept while it matters
- :mod:`bot.web.view`: neutral view models of a meeting (statements, stances, scoreboard, decision)
- :mod:`bot.web.conversations`: conversations and their lines as a person reads them (not keys and roles)
- :mod:`bot.web.pages`: the pages; :mod:`bot.web.meeting_stream`: the live meeting stream (SSE)
- :mod:`bot.web.decisions`: the decisions page and the owner's rulings and action-item changes there;
  :mod:`bot.web.rulings`: what the pages show of a verdict and a due date
- :mod:`bot.web.track`: each advisor's track record; :mod:`bot.web.numbers`: whole numbers from outside
- :mod:`bot.web.schedule`: the standing work (``/every``), its next runs, pausing, resuming, removing
- :mod:`bot.web.render`: the Jinja2 environment (autoescape; not the prompt one), Markdown, the SVG chart
- :mod:`bot.web.config` / :mod:`bot.web.settings`: config ``web`` and its plain settings

This module imports nothing heavy and re-exports nothing (its modules are imported by name): the
config loads :mod:`bot.web.config` on every command, which must not pay for aiohttp or Jinja2.
The web chat channel is another package, :mod:`bot.channels.web`.
"""

__all__: list[str] = []
