"""What the rooms' API speaks: who asks (a visitor, a membership), what they post (a result), and
why a room refuses (a RoomError, in the app's own words)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass


class RoomError(ValueError):
    """Why a room can't do what was asked: a sentence of the app's own words (a nickname or a
    code a person typed is never in it)."""


@dataclass(frozen=True)
class Visitor:
    """Who asks, as far as the server can tell: the client's address (None: this machine) and
    their browser's id (a cookie of the app's; None when it has none yet)."""

    address: str | None = None
    browser: str | None = None


@dataclass(frozen=True)
class Membership:
    """A student's place in a room: what their session holds (the token is their secret)."""

    code: str
    nickname: str
    token: str
    expires: float = 0.0  # when the room expires (a browser's cookie for it lasts no longer)


@dataclass(frozen=True)
class Result:
    """What the checker measured of a run on a challenge."""

    challenge: str
    score: float  # the challenge's metric on its visible test points
    hidden_score: float | None  # the same on the hidden part
    epoch: int
    parameters: int
    link: str  # the setup, as a link inside the app ("/playground?...")


@dataclass(frozen=True)
class Rerun:
    """A ranked entry to re-train from its link (mlp/rooms/recheck.py)."""

    member: str  # the member's id in the room
    nickname: str
    link: str
    epoch: int
    score: float
    hidden_score: float | None


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()
