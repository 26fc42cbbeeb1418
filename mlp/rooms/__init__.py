"""Class rooms: a join code, an instructor's board, and every student's checked results, live.

rooms       a room made, joined, left; the hidden part's seed; housekeeping
instructor  what an instructor's secret does: the board, the CSV, close, lock, cap, hide, remove
posts       a checked result onto the board, and nothing lost on the way (outbox: what waits)
ranks       a challenge's entries ranked, live and on the hidden part; the CSV
names       one student, one name: nicknames that look alike are one (Unicode's UTS #39)
limits      every limit's number and refusal, and the gate that counts visitors against them
recheck     at Close, the ranked entries re-trained from their links on the server
records     what the API speaks: a visitor, a membership, a result, a RoomError
store       the database: SQLite by default, PostgreSQL for replicas; its schema and migrations
"""

from mlp.rooms.instructor import Instructor
from mlp.rooms.ranks import Board, Entry, Room
from mlp.rooms.records import Membership, Result, RoomError, Visitor
from mlp.rooms.rooms import Rooms
from mlp.rooms.store import Store, StoreError

__all__ = [
    "Board",
    "Entry",
    "Instructor",
    "Membership",
    "Result",
    "Room",
    "RoomError",
    "Rooms",
    "Store",
    "StoreError",
    "Visitor",
]
