"""pages/ui/cookies.py: the app's cookies set by the server, HttpOnly, SameSite=Lax, Secure behind
HTTPS; a ticket is good once, for a minute, and the tickets waiting are bounded."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

import pytest
from starlette.requests import Request

from pages.ui import cookies
from pages.ui.cookies import PATH, Cookie, endpoint, hand_over, redeem


def post(ticket: str, scheme: str = "http") -> tuple[int, list[str]]:
    scope = {
        "type": "http",
        "method": "POST",
        "path": PATH,
        "scheme": scheme,
        "headers": [(b"x-ticket", ticket.encode())],
        "query_string": b"",
        "server": ("127.0.0.1", 8501),
    }
    with ThreadPoolExecutor(1) as pool:  # its own event loop (Playwright's may run in this thread)
        response = pool.submit(asyncio.run, endpoint(Request(scope))).result()
    return response.status_code, [v.decode() for k, v in response.raw_headers if k == b"set-cookie"]


def test_a_ticket_sets_its_cookies_once_httponly_and_lax_and_secure_behind_https():
    wanted = (Cookie("mlp_browser", "b" * 32, 86_400), Cookie("mlp_room", "ABCDEFGH:token_-x", 3600))
    status, set_cookies = post(hand_over(wanted))
    assert status == 204 and len(set_cookies) == 2
    for header in set_cookies:
        assert "HttpOnly" in header and "SameSite=lax" in header and "Path=/" in header
        assert "Secure" not in header  # plain HTTP: a Secure cookie would never come back
    assert set_cookies[1].startswith("mlp_room=ABCDEFGH:token_-x;") and "Max-Age=3600" in set_cookies[1]
    ticket = hand_over(wanted)
    assert post(ticket, "https")[1][0].count("Secure") == 1  # (X-Forwarded-Proto from a trusted proxy)
    assert post(ticket)[0] == 404  # spent
    assert post("guessed")[0] == 404 and post("")[0] == 404
    status, (deleted,) = post(hand_over((Cookie("mlp_room", "", 0),)))
    assert "Max-Age=0" in deleted  # Leave: the browser forgets the room


def test_tickets_expire_and_are_bounded(monkeypatch):
    clock = [1000.0]
    monkeypatch.setattr(cookies.time, "monotonic", lambda: clock[0])
    monkeypatch.setattr(cookies, "_tickets", {})
    ticket = hand_over((Cookie("mlp_room", "x", 1),))
    clock[0] += cookies.TICKET_SECONDS + 1
    assert redeem(ticket) is None  # a minute at most
    monkeypatch.setattr(cookies, "MAX_TICKETS", 3)
    made = [hand_over((Cookie("mlp_room", str(i), 1),)) for i in range(5)]
    assert made[3:] == ["", ""] and len(cookies._tickets) == 3  # a flood of runs can't grow it
    clock[0] += cookies.TICKET_SECONDS + 1
    assert hand_over((Cookie("mlp_room", "y", 1),)) != ""  # the expired ones made room


@pytest.mark.parametrize("value", ["x:y", "ABCDEFGH:" + "t" * 40])
def test_the_rooms_cookie_value_is_what_starlette_sets_without_quoting(value):
    _, (header,) = post(hand_over((Cookie("mlp_room", value, 60),)))
    assert header.startswith(f"mlp_room={value};")
