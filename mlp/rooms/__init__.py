"""Class rooms: a join code, an instructor's board, and every student's checked results, live."""

from mlp.rooms.rooms import Board, Entry, Membership, Result, Room, RoomError, Rooms
from mlp.rooms.store import Store, StoreError

__all__ = ["Board", "Entry", "Membership", "Result", "Room", "RoomError", "Rooms", "Store", "StoreError"]
