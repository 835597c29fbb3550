"""Slash commands of the board (``/cost``, ``/compact``, ``/meeting`` ...), written against the
narrow :class:`board.commands.host.CommandHost` and registered by the board that builds them;
:mod:`board.commands.about` is the board describing itself (``/help`` in each channel's words,
``/roles``, ``/souls``)."""

# Submodules, imported on use (this file imports none of them).
__all__ = ["about", "builtin", "host", "llm", "memory", "registry", "room"]
