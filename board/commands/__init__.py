"""Slash commands of the board (``/cost``, ``/compact``, ``/meeting`` ...)."""
