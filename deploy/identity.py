"""Which process answers a replica's port: each start gets a secret token, and proves it over HTTP.

deploy/replicas.py starts every replica with a fresh random token in its environment (TOKEN_VAR)
and asks PATH on the replica's port with a random challenge. Only the process started with the
token can answer with their HMAC; another server on that port (even another Streamlit, whose
health check says "ok" too) can't. The token itself never travels, so a visitor who reaches PATH
through nginx learns nothing from it. A server started without a token answers 404.

The app serves the route (app.py); the launcher imports only `proof`, without Streamlit.
"""

from __future__ import annotations

import hashlib
import hmac
import os

TOKEN_VAR = "MLP_REPLICA_TOKEN"
PATH = "/api/replica"
CHALLENGE_CHARS = 64  # the longest challenge answered: the launcher's are 32


def proof(token: str, challenge: str) -> str:
    """What the replica started with `token` answers to `challenge`."""
    return hmac.new(token.encode(), challenge.encode(), hashlib.sha256).hexdigest()


def replica_route():
    """The route that answers challenges, for app.py's st.App (a starlette Route)."""
    from starlette.responses import PlainTextResponse
    from starlette.routing import Route

    token = os.environ.get(TOKEN_VAR, "")

    async def answer(request) -> PlainTextResponse:
        challenge = request.query_params.get("challenge", "")
        if not token or not 0 < len(challenge) <= CHALLENGE_CHARS:
            return PlainTextResponse("Not found", status_code=404)
        return PlainTextResponse(proof(token, challenge), headers={"Cache-Control": "no-store"})

    return Route(PATH, answer, methods=["GET"])
