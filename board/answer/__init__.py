"""The front door: what happens to a message after the intake hands it over, as one staged call.

:func:`answer` admits it (:mod:`~board.answer.admit`: clean, limit, identify, route, gate), reads its
attachments once after the gate, and dispatches it (:mod:`~board.answer.dispatch`: memory talk,
command, meeting, chat) inside its spending and streaming context (:class:`~board.answer.money.Money`).
It needs only a :class:`~board.answer.door.Door`, the typed subset of the board's parts.
:func:`~board.answer.after.after` is the work a delivered answer leaves for outside its turn (the history compacted
ahead of the next one).
"""

from board.answer.admit import STAGES, Admitted, Asking, admit
from board.answer.after import after
from board.answer.answer import answer, read_media
from board.answer.dispatch import dispatch, media_notice
from board.answer.door import Door
from board.answer.money import Money

__all__ = ["STAGES", "Admitted", "Asking", "Door", "Money", "admit", "after", "answer", "dispatch", "media_notice",
           "read_media"]
