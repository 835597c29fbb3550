"""Decision life, beside the board room: what becomes of a decision after its meeting. The owner's verdict
(ratify, veto, revisit) and its rulings, the action items' due dates and reminders, the members'
predictions and their track records, and recall: earlier decisions found for a new meeting and the
reviews of decisions; the words all of it speaks in (``wording``: who owes an item, how late it is) and
what waits for the owner when a chat opens (``waiting``). The room's meetings write and read these
records (``board.room`` imports this package, never the reverse); a revisit's follow-up meeting is
convened by :mod:`board.room.followup`."""

# Submodules, imported on use (this file imports none of them).
__all__ = ["actions", "migrations", "predictions", "ratify", "recall", "reminders", "waiting", "wording"]
