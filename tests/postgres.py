"""A real PostgreSQL for the tests: Debian's server binaries, a throwaway cluster on 127.0.0.1.

`with postgres_server() as url:` initialises a cluster in a temporary folder (trust auth, no
fsync: nothing in it outlives the tests), starts it on a free port, yields its URL and removes
it all afterwards. As root, the server runs as the `postgres` user (it refuses root).
`stop_server(url)` and `start_server(url)` take it down and bring it back on the same port: a
restart in the middle of a class.
"""

from __future__ import annotations

import glob
import itertools
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.harness import free_port


def postgres_bin() -> Path | None:
    """The folder of initdb and pg_ctl: Debian keeps them in /usr/lib/postgresql/<major>/bin."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=lambda p: int(p.split("/")[4]))
    if found:
        return Path(found[-1]).parent
    pg_ctl = shutil.which("pg_ctl")
    return Path(pg_ctl).resolve().parent if pg_ctl else None


def missing() -> str | None:
    """Why PostgreSQL can't run here, or None."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "the psycopg package is not installed (pip install -r requirements-dev.txt)"
    if postgres_bin() is None:
        return "PostgreSQL's server is not installed (apt-get install postgresql)"
    return None


@contextmanager
def postgres_server() -> Iterator[str]:
    bin_dir = postgres_bin()
    assert bin_dir is not None, missing()
    folder = Path(tempfile.mkdtemp(prefix="mlp-postgres-"))
    as_postgres: list[str] = []
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres", "postgres")
        as_postgres = ["runuser", "-u", "postgres", "--"]
    data, port = folder / "data", free_port()

    def run(*args: str) -> None:
        subprocess.run([*as_postgres, *args], check=True, capture_output=True, timeout=120)

    run(str(bin_dir / "initdb"), "-D", str(data), "-U", "mlp", "--auth=trust", "-E", "UTF8", "--no-sync")
    options = f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off"
    url = f"postgresql://mlp@127.0.0.1:{port}/postgres"
    start = [
        str(bin_dir / "pg_ctl"),
        "-D",
        str(data),
        "-o",
        options,
        "-l",
        str(folder / "log"),
        "-w",
        "-t",
        "60",
    ]
    _servers[url] = (lambda: run(*start, "start"), lambda: run(*start[:3], "-m", "fast", "-w", "stop"))
    try:
        run(*start, "start")
        yield url
    finally:
        _servers.pop(url, None)
        subprocess.run(
            [*as_postgres, str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"],
            capture_output=True,
            timeout=60,
        )
        shutil.rmtree(folder, ignore_errors=True)


_databases = itertools.count()
_servers: dict[str, tuple] = {}  # a running server's URL -> (start it, stop it)


def stop_server(url: str) -> None:
    """Shuts down the server `url` names (a postgres_server's, or one of its databases'): its
    clients' connections are cut, new ones refused."""
    _servers[url.rsplit("/", 1)[0] + "/postgres"][1]()


def start_server(url: str) -> None:
    """Starts it again, on the same port, with everything it held."""
    _servers[url.rsplit("/", 1)[0] + "/postgres"][0]()


def new_database(server: str, prefix: str) -> str:
    """The URL of a new, empty database on `server` (a postgres_server's URL)."""
    import psycopg

    name = f"{prefix}_{next(_databases)}"
    with psycopg.connect(server, autocommit=True) as db:
        db.execute(f"CREATE DATABASE {name}")
    return server.rsplit("/", 1)[0] + f"/{name}"
