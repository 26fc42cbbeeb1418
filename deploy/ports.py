"""The ports the replica launcher needs, checked before it starts anything."""

from __future__ import annotations

import errno
import os
import socket
from collections.abc import Sequence


def in_use(host: str, port: int) -> bool:
    """Whether a server already holds `port` on `host` ("" for every address): binding it as
    Streamlit and nginx do, with SO_REUSEADDR, so that connections still closing don't count."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family) as probe:
        if os.name != "nt":  # on Windows SO_REUSEADDR would let the probe share a live port
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as error:
            return error.errno == errno.EADDRINUSE  # no right to a low port: nginx will say so itself
    return False


def listen_address(listen: str) -> tuple[str, int] | None:
    """nginx's `listen` ("8080", "127.0.0.1:8080", "[::1]:8080") as (host, port), host "" for
    every address; None for anything else (a unix socket)."""
    host, _, port = listen.rpartition(":")
    if not port.isdigit():
        return None
    host = host.strip("[]")
    return ("" if host == "*" else host), int(port)


def refusal(replica_ports: Sequence[int], listen: str) -> str | None:
    """Why the launcher can't start on these ports, in one sentence; None when they are free."""
    nginx = listen_address(listen)
    if nginx is not None and nginx[1] in replica_ports:
        return f"nginx's port {nginx[1]} is also a replica's: choose another with --listen, or --first-port."
    taken = [f"{port} (a replica)" for port in replica_ports if in_use("127.0.0.1", port)]
    if nginx is not None and in_use(*nginx):
        taken.append(f"{nginx[1]} (nginx)")
    if not taken:
        return None
    if len(taken) == 1:
        held = f"Port {taken[0]} is already in use: stop the program that holds it"
    else:
        ports = f"{', '.join(taken[:-1])} and {taken[-1]}"
        held = f"Ports {ports} are already in use: stop the programs that hold them"
    return f"{held}, or choose free ports with --first-port (the replicas') and --listen (nginx's)."
