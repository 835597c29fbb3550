-- A start tells the displays the end of each meeting that ended lately once more (board/room/convene.py:
-- BoardRoom.retell_ended): this index finds them without reading the whole table.
CREATE INDEX meetings_ended_at ON meetings(ended_at) WHERE status = 'ended';
