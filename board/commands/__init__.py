"""Slash commands of the board (``/cost``, ``/compact``, ``/meeting`` ...), written against the
narrow :class:`board.commands.host.CommandHost` and registered into the board's
:class:`board.commands.registry.CommandRegistry` by the wiring closet (:mod:`board.app.build`);
:mod:`board.commands.builtin` holds the ones every board answers (``/help``, ``/roles``, ``/reset``,
``/souls``), :mod:`board.commands.about` is the board describing itself (``/help`` in each channel's words)."""

# Submodules, imported on use (this file imports none of them).
__all__ = ["about", "builtin", "consent", "controls", "decisions", "files", "followup", "host", "llm", "memory",
           "people", "predictions", "recall", "registry", "review", "room",
           "standing"]
