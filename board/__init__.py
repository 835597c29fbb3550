"""Sabha's domain: roles, soul files, transcripts, prompts and agent turns, grouped by concern in packages;
the root holds only what every part uses (clock, db, envelope, masking, roles, tasks).

Nothing in this package knows about Telegram, WhatsApp or the terminal; channels in
``bot`` turn their native messages into :class:`board.envelope.Envelope` objects and
deliver the :class:`board.envelope.Reply` objects the board returns.
"""

__all__ = ["__version__"]

__version__ = "0.1.0"
