"""What a room may hold and what a visitor may do, in numbers: each limit's one home.

A hosted demo is one small server for a whole class, and anyone with the link can use it. Every
way in is bounded, and each refusal is a sentence that says what to do: rooms (from one address
and in all), joins (from one address, into one room, under new nicknames from one browser),
members per room (a cap the instructor sets), rows a board draws per challenge, and the
database's size. Counts that must hold across replicas are counted in the database (`tries`);
a visitor's address and browser are kept only as salted digests, deleted with their room or
within the hour.

Addresses are read by the server, not sent by the page: Streamlit's server (uvicorn) takes a
client's address from `X-Forwarded-For` only when the request comes from a proxy it trusts
($FORWARDED_ALLOW_IPS, by default the same machine, where deploy/replicas.py runs nginx). A
class behind one school router shares one address: the per-address limits are sized for it.
A visitor on the server's own machine (no address: `streamlit run app.py` on a laptop, or a proxy
that doesn't pass the address on) is its operator, and isn't limited per address.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import os
import secrets
from collections.abc import Callable

from mlp.rooms.records import RoomError
from mlp.rooms.store import Store

MEMBERS = 60  # a room's member cap unless the instructor sets another
MAX_MEMBERS = 500  # the largest cap an instructor may set
NICKNAMES_PER_BROWSER = 3  # nicknames one browser may join one room under
JOINS_PER_ADDRESS = (
    120  # joins tried from one address, into any room, per JOIN_WINDOW (a class behind one router)
)
JOINS_PER_ROOM = 600  # joins tried into one room per JOIN_WINDOW (a full room of MAX_MEMBERS, and tries)
JOIN_WINDOW = 600.0  # seconds
ROOMS_PER_ADDRESS = 3  # open rooms started from one address
OPENS_PER_ADDRESS = 10  # rooms started from one address per OPEN_WINDOW
OPEN_WINDOW = 3600.0  # seconds
MAX_ROOMS = 200  # open rooms on this server, in all
TOP_ROWS = 50  # rows a board draws per challenge; the rest are counted
TRIES_KEPT = max(JOIN_WINDOW, OPEN_WINDOW)  # how long a try is remembered
SIZE_SECONDS = 30.0  # the database's size is measured at most this often
DATABASE_MB_VAR = "MLP_ROOMS_MAX_MB"
DATABASE_MB = 256  # the rooms' database, at most, unless $MLP_ROOMS_MAX_MB says otherwise


def database_bytes() -> int:
    """The database's cap: $MLP_ROOMS_MAX_MB megabytes, else DATABASE_MB."""
    value = os.environ.get(DATABASE_MB_VAR, "").strip()
    return (int(value) if value.isdigit() and int(value) > 0 else DATABASE_MB) * 1024 * 1024


# What a visitor is told when a limit holds them back (the app's words; no name, code or address)
ROOM_FULL = "This room is full ({cap} students): ask your instructor to raise its cap."
ROOM_LOCKED = "The instructor locked this room: no new joins (those in it keep posting)."
REFUSED_HERE = (
    "The instructor removed someone from this room on this browser or this network: ask them to let you in."
)
TOO_MANY_NICKNAMES = (
    f"This browser has joined this room under {NICKNAMES_PER_BROWSER} nicknames already: "
    "join again under one of them."
)
JOINS_FROM_ADDRESS = "Too many joins from your network in the last few minutes: try again in a few minutes."
JOINS_INTO_ROOM = "Too many joins into this room in the last few minutes: try again in a few minutes."
ROOMS_FROM_ADDRESS = (
    f"Your network has {ROOMS_PER_ADDRESS} rooms open already: close one (or let it expire) first."
)
OPENS_FROM_ADDRESS = f"Your network started {OPENS_PER_ADDRESS} rooms this hour: try again later."
SERVER_ROOMS = f"This server has {MAX_ROOMS} rooms open, as many as it takes: try again later."
DATABASE_FULL = (
    "The class rooms' database is full: rooms already open go on, new ones and joins wait until some expire."
)


class Gate:
    """Counts what visitors do against the limits, in the database (so replicas count together),
    and knows visitors only by salted digests."""

    def __init__(self, store: Store, clock: Callable[[], float]) -> None:
        self.store, self.clock = store, clock
        self._sized = (-math.inf, 0)  # (when, bytes): the database's size, last measured
        with store.transaction() as db:  # the database's own salt, made by the first process to ask
            db.execute(
                "INSERT INTO keys (name, value) VALUES ('visitors', ?) ON CONFLICT DO NOTHING",
                (secrets.token_hex(32),),
            )
            self._salt = db.one("SELECT value FROM keys WHERE name = 'visitors'")[0].encode()

    def who(self, value: str | None) -> str:
        """A visitor's address or browser id as the database keeps it: a salted digest (None,
        this machine, is one visitor too)."""
        return hmac.new(self._salt, (value or "local").encode(), hashlib.sha256).hexdigest()[:32]

    def tried(self, what: str, who: str, window: float, most: int, refusal: str) -> None:
        """Counts a try of `what` by `who`, or raises RoomError(refusal) if they made `most` in
        the last `window` seconds (a refused try isn't counted: it adds nothing to the database)."""
        now = self.clock()
        with self.store.transaction() as db:
            count = db.one(
                "SELECT COUNT(*) FROM tries WHERE what = ? AND who = ? AND at > ?", (what, who, now - window)
            )[0]
            if count < most:
                db.execute("INSERT INTO tries (what, who, at) VALUES (?, ?, ?)", (what, who, now))
        if count >= most:
            raise RoomError(refusal)

    def check_size(self) -> None:
        """A RoomError if the database has reached its cap (measured at most every SIZE_SECONDS)."""
        now = self.clock()
        when, size = self._sized
        if now - when >= SIZE_SECONDS:
            size = self.store.size()
            self._sized = (now, size)
        if size >= database_bytes():
            raise RoomError(DATABASE_FULL)
