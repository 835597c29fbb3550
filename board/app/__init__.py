"""The wiring closet: a board's parts built complete in one place (:func:`build_parts` -> frozen
:class:`Parts`), and :class:`Board`, which keeps only their life (open, watch, warm up, close) and the
one entry into the front door (:meth:`Board.handle`, :mod:`board.answer`)."""

from board.app.board import Board
from board.app.build import build_parts
from board.app.parts import Observers, Parts
from board.app.settings import BOARD_MIGRATIONS, DB_FILE, BoardSettings

__all__ = ["BOARD_MIGRATIONS", "DB_FILE", "Board", "BoardSettings", "Observers", "Parts", "build_parts"]
