"""The app's own cookies, set by the server: HttpOnly, SameSite=Lax, and Secure behind HTTPS.

A page's script can't set a response header, and a cookie set from JavaScript can be read by
any script on the page. So a script run that wants cookies changed hands the browser a
one-time ticket (a tiny component, `hand_over`), and the browser posts it to PATH; the route
answers with the Set-Cookie headers the ticket stands for. The cookies' values never reach the
page: a ticket is good once, for TICKET_SECONDS, in this process (the visitor's requests reach
the replica that holds their session: deploy/nginx.conf). Secure is set when the browser's
request came over HTTPS (directly, or through a proxy that says so in X-Forwarded-Proto and
that the server trusts: $FORWARDED_ALLOW_IPS, as for addresses, mlp/rooms/limits.py).

A new session reads the cookies in its first run (st.context.cookies): what a browser
remembers costs no extra run of the page.
"""

from __future__ import annotations

import secrets
import threading
import time
from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from pages.ui.components import component

PATH = "/api/cookies"
TICKET_SECONDS = 60.0
MAX_TICKETS = 10_000  # waiting at once, in all: a flood of script runs can't grow this without bound


@dataclass(frozen=True)
class Cookie:
    """One cookie the server's route sets: its name, its value, how long it lasts."""

    name: str
    value: str
    seconds: int  # how long the browser keeps it; 0 deletes it


_tickets: dict[str, tuple[tuple[Cookie, ...], float]] = {}
_lock = threading.Lock()


def hand_over(cookies: tuple[Cookie, ...]) -> str:
    """A ticket for `cookies` (to set, or with 0 seconds to delete), for `deliver` to give the
    browser; "" if too many wait already (the cookies wait for a later run)."""
    ticket, now = secrets.token_urlsafe(24), time.monotonic()
    with _lock:
        for old in [t for t, (_, until) in _tickets.items() if until < now]:
            del _tickets[old]
        if len(_tickets) >= MAX_TICKETS:
            return ""
        _tickets[ticket] = (cookies, now + TICKET_SECONDS)
    return ticket


def deliver(ticket: str, key: str) -> None:
    """The browser posts `ticket` to PATH (once, however many runs draw it: draw the last ticket
    in every run, so that a quick rerun can't remove it before the browser has sent it)."""
    component("cookies")(key=key, data={"path": PATH, "ticket": ticket})


def redeem(ticket: str) -> tuple[Cookie, ...] | None:
    """The cookies a ticket stands for, once; None for a ticket spent, expired or never given."""
    with _lock:
        cookies, until = _tickets.pop(ticket, ((), -1.0))
    return cookies if until >= time.monotonic() else None


async def endpoint(request: Request) -> Response:
    cookies = redeem(request.headers.get("x-ticket", ""))
    if cookies is None:
        return Response("Not found", status_code=404, headers={"Cache-Control": "no-store"})
    response = Response(status_code=204, headers={"Cache-Control": "no-store"})
    for cookie in cookies:
        response.set_cookie(
            cookie.name,
            cookie.value,
            max_age=cookie.seconds,
            path="/",
            httponly=True,
            samesite="lax",
            secure=request.url.scheme == "https",
        )
    return response


def route() -> Route:
    """The route app.py's st.App serves."""
    return Route(PATH, endpoint, methods=["POST"])
