"""Slash commands of the board (``/cost``, ``/compact``, ``/meeting`` ...), written against the
narrow :class:`board.commands.host.CommandHost` and registered by the board that builds them."""

# Submodules, imported on use (this file imports none of them).
__all__ = ["host", "llm", "room"]
