"""Where a class's rooms live: SQLite by default, PostgreSQL when the app runs as replicas.

One setting chooses: $MLP_DATABASE_URL. Unset, the rooms go to one SQLite file in the user's
data folder (nothing to start; `streamlit run app.py` just works, and a restarted server keeps
its rooms). `postgresql://user:password@host/db` puts them in PostgreSQL, which every replica
shares (a lost replica loses nothing that was posted); it needs the `psycopg` package.
`sqlite:///relative/path` or `sqlite:////absolute/path` names another SQLite file, and
`sqlite:///:memory:` one that lives as long as the process (tests).

The schema is the app's to create and to migrate: MIGRATIONS, applied in order, each once, in
one transaction with the version it brings (`schema_version`). A database written by a newer
app is refused rather than misread.

The SQL is written once, in SQLite's dialect with `?` placeholders, and only what both databases
read the same way (ON CONFLICT ... DO UPDATE, ON DELETE CASCADE, DOUBLE PRECISION).
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from mlp.errors import InputError

URL_VAR = "MLP_DATABASE_URL"
MAX_IDLE = 8  # connections kept open between transactions; more at once open and close their own
PING_SECONDS = 30.0  # a PostgreSQL connection idle this long is checked before it is used
# How long a SQLite writer waits for the file's one write lock before the store calls the database
# busy (a transient StoreError): long enough for any write of the app's, short enough that a page
# run never hangs behind someone else's. A post that meets a busy database waits and is retried.
BUSY_SECONDS = 2.0
DATA_VAR = "MLP_PLAYGROUND_STATE"  # the folder of the default SQLite file

MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (  # 1: rooms, their members, each member's best result per challenge, closed challenges
        """CREATE TABLE rooms (
            code TEXT PRIMARY KEY,
            secret TEXT NOT NULL,
            title TEXT NOT NULL,
            created DOUBLE PRECISION NOT NULL,
            expires DOUBLE PRECISION NOT NULL,
            closed DOUBLE PRECISION
        )""",
        "CREATE INDEX rooms_expires ON rooms (expires)",
        """CREATE TABLE members (
            room TEXT NOT NULL REFERENCES rooms (code) ON DELETE CASCADE,
            member TEXT NOT NULL,
            nickname TEXT NOT NULL,
            nickname_key TEXT NOT NULL,
            joined DOUBLE PRECISION NOT NULL,
            hidden INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (room, member)
        )""",
        "CREATE UNIQUE INDEX members_nickname ON members (room, nickname_key)",
        """CREATE TABLE results (
            room TEXT NOT NULL,
            member TEXT NOT NULL,
            challenge TEXT NOT NULL,
            score DOUBLE PRECISION NOT NULL,
            goodness DOUBLE PRECISION NOT NULL,
            hidden_score DOUBLE PRECISION,
            met INTEGER NOT NULL,
            epoch INTEGER NOT NULL,
            parameters INTEGER NOT NULL,
            link TEXT NOT NULL,
            posted DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (room, member, challenge),
            FOREIGN KEY (room, member) REFERENCES members (room, member) ON DELETE CASCADE
        )""",
        """CREATE TABLE closed_challenges (
            room TEXT NOT NULL REFERENCES rooms (code) ON DELETE CASCADE,
            challenge TEXT NOT NULL,
            closed DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (room, challenge)
        )""",
    ),
    (  # 2: a class a room can trust (mlp/rooms/rooms.py): joins that cost something, members who
        # leave or are removed, a lock, a cap, the hidden points' secret, re-runs at Close
        "ALTER TABLE rooms ADD COLUMN hidden_key TEXT NOT NULL DEFAULT ''",
        "ALTER TABLE rooms ADD COLUMN locked INTEGER NOT NULL DEFAULT 0",
        "ALTER TABLE rooms ADD COLUMN member_cap INTEGER NOT NULL DEFAULT 60",
        "ALTER TABLE rooms ADD COLUMN opener TEXT NOT NULL DEFAULT ''",
        "ALTER TABLE members ADD COLUMN gone DOUBLE PRECISION",
        "ALTER TABLE members ADD COLUMN removed INTEGER NOT NULL DEFAULT 0",
        "ALTER TABLE members ADD COLUMN browser TEXT NOT NULL DEFAULT ''",
        "ALTER TABLE members ADD COLUMN address TEXT NOT NULL DEFAULT ''",
        # what signs a member in: the digest of their token (`member` stays the row's id, which
        # results point at; a student who comes back from the same browser gets a new token)
        "ALTER TABLE members ADD COLUMN token TEXT NOT NULL DEFAULT ''",
        "UPDATE members SET token = member",
        "CREATE UNIQUE INDEX members_token ON members (room, token)",
        # a nickname's skeleton as typed (mlp/rooms/names.py); nickname_key is its case-free one
        "ALTER TABLE members ADD COLUMN nickname_look TEXT NOT NULL DEFAULT ''",
        "CREATE UNIQUE INDEX members_look ON members (room, nickname_look) WHERE nickname_look <> ''",
        "ALTER TABLE results ADD COLUMN rerun TEXT",
        "ALTER TABLE results ADD COLUMN rerun_score DOUBLE PRECISION",
        "ALTER TABLE results ADD COLUMN rerun_hidden DOUBLE PRECISION",
        """CREATE TABLE refused (
            room TEXT NOT NULL REFERENCES rooms (code) ON DELETE CASCADE,
            kind TEXT NOT NULL,
            who TEXT NOT NULL,
            PRIMARY KEY (room, kind, who)
        )""",
        """CREATE TABLE tries (
            what TEXT NOT NULL,
            who TEXT NOT NULL,
            at DOUBLE PRECISION NOT NULL
        )""",
        "CREATE INDEX tries_who ON tries (what, who, at)",
        # a board's ranks, top first, without sorting every entry (mlp/rooms/ranks.board_rows)
        "CREATE INDEX results_rank ON results (room, challenge, goodness DESC, posted)",
        "CREATE TABLE keys (name TEXT PRIMARY KEY, value TEXT NOT NULL)",
    ),
)


class StoreError(InputError):
    """The rooms' database can't be used: a sentence of the app's, with what it quotes (the
    database's own words, a URL without its password, a folder) kept apart, for a page to show
    literally. `transient`: the database is busy or restarting, and the same call may work in a
    moment (SQLite's write lock held too long, a PostgreSQL server down or starting up)."""

    def __init__(self, template: str, *quoted: object, transient: bool = False) -> None:
        super().__init__(template, *quoted)
        self.transient = transient


def default_url() -> str:
    """$MLP_DATABASE_URL, else a SQLite file in $MLP_PLAYGROUND_STATE or the user data folder."""
    if url := os.environ.get(URL_VAR, "").strip():
        return url
    if folder := os.environ.get(DATA_VAR, "").strip():
        base = Path(folder).expanduser()
    elif os.name == "nt" and os.environ.get("LOCALAPPDATA"):
        base = Path(os.environ["LOCALAPPDATA"]) / "mlp-playground"
    else:
        base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share") / "mlp-playground"
    return f"sqlite:///{(base / 'rooms.sqlite3').absolute()}"


def safe_url(url: str) -> str:
    """The URL without its password, for messages and logs."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{parts.username}:***@{host}" + (f":{parts.port}" if parts.port else "")
    return parts._replace(netloc=netloc).geturl()


class Store:
    """Connections to one database (a few kept open between uses), its schema up to date.
    `with store.transaction() as db: db.execute(sql, params)`: the block commits, or rolls back
    if it raises."""

    def __init__(self, url: str | None = None) -> None:
        self.url = url or default_url()
        scheme = urlsplit(self.url).scheme
        if scheme == "sqlite":
            self.kind = "sqlite"
            if not self.url.startswith("sqlite:///"):
                raise StoreError("A SQLite URL reads sqlite:///relative/path or sqlite:////absolute/path.")
            self.path = self.url.removeprefix("sqlite:///") or ":memory:"
            if self.path == ":memory:":
                self.path = f"file:rooms-{id(self)}?mode=memory&cache=shared"
                self._keep = self._sqlite()  # a shared in-memory database lives while one connection does
            else:
                try:
                    Path(self.path).parent.mkdir(parents=True, exist_ok=True)
                except OSError as err:
                    raise StoreError(
                        "Can't make the folder for the rooms' database: {}.", err.strerror
                    ) from None
        elif scheme in ("postgresql", "postgres"):
            self.kind = "postgresql"
            try:
                import psycopg  # noqa: F401 (only a PostgreSQL setup needs it)
            except ImportError:
                raise StoreError(
                    f"{URL_VAR} names PostgreSQL, which needs the psycopg package: "
                    'pip install "psycopg[binary]"'
                ) from None
        else:
            raise StoreError(
                f"{URL_VAR} must start with sqlite:// or postgresql:// (it starts with {{}}).", scheme
            )
        self._lock = threading.Lock()
        self._idle: list[
            tuple[Any, float]
        ] = []  # with when each was given back  # open connections no transaction holds (Streamlit runs each
        # script run on a thread of its own: a connection a thread would be one a run)
        self._migrate()

    def _sqlite(self) -> sqlite3.Connection:
        uri = self.path.startswith("file:")
        db = sqlite3.connect(
            self.path, uri=uri, timeout=BUSY_SECONDS, isolation_level=None, check_same_thread=False
        )
        db.execute("PRAGMA foreign_keys = ON")
        if not uri:
            db.execute("PRAGMA journal_mode = WAL")  # a crash leaves the file consistent
            db.execute("PRAGMA synchronous = NORMAL")  # durable at each checkpoint; WAL keeps it consistent
        return db

    def _connect(self) -> Any:
        if self.kind == "sqlite":
            return self._sqlite()
        import psycopg

        return psycopg.connect(self.url, connect_timeout=10, autocommit=True)  # blocks are transactions

    def _borrow(self) -> Any:
        with self._lock:
            db, since = self._idle.pop() if self._idle else (None, 0.0)
        if db is not None and self.kind == "postgresql" and time.monotonic() - since > PING_SECONDS:
            try:  # idle a while: the server may have restarted since
                db.execute("SELECT 1")
            except Exception:  # a dead connection: another is opened below
                db.close()
        if db is not None and not getattr(db, "closed", False):
            return db
        try:
            return self._connect()
        except Exception as err:  # the database's own words, without a password
            raise StoreError(
                "Can't open the rooms' database ({}): {}", safe_url(self.url), err, transient=_transient(err)
            ) from None

    def _give_back(self, db: Any) -> None:
        with self._lock:
            if len(self._idle) < MAX_IDLE:
                self._idle.append((db, time.monotonic()))
                return
        db.close()

    @contextmanager
    def transaction(self, write: bool = True) -> Iterator[Cursor]:
        """One transaction on a pooled connection. On SQLite, a writer queues for the file's one
        write lock at the start (not at its first write); a reader (`write` False) takes none and
        reads the last commit while a writer writes (WAL), however many writers queue."""
        db, healthy = self._borrow(), True
        try:
            if self.kind == "sqlite":
                db.execute("BEGIN IMMEDIATE" if write else "BEGIN")
                cursor = Cursor(db.cursor(), "?")
                try:
                    yield cursor
                except BaseException:
                    db.execute("ROLLBACK")
                    raise
                db.execute("COMMIT")
            else:
                with db.transaction():
                    yield Cursor(db.cursor(), "%s")
        except (sqlite3.Error, _pg_errors()) as err:
            healthy = False  # a dropped connection, a locked file: the next call opens another
            if self.kind == "postgresql" and _transient(
                err
            ):  # a restarted server: every idle one is dead too
                self.close()
            raise StoreError("The rooms' database failed: {}", err, transient=_transient(err)) from None
        except BaseException:
            healthy = self.kind == "sqlite" or not db.closed
            raise
        finally:
            if healthy:
                self._give_back(db)
            else:
                db.close()

    def _migrate(self) -> None:
        with self.transaction() as db:
            if self.kind == "postgresql":  # replicas starting together migrate one at a time
                db.execute("SELECT pg_advisory_xact_lock(2804)")
            db.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
            row = db.one("SELECT MAX(version) FROM schema_version")
            version = row[0] or 0
            if version > len(MIGRATIONS):
                raise StoreError(
                    f"The rooms' database is at schema {version}, newer than this app's "
                    f"{len(MIGRATIONS)}: update the app."
                )
            for number, statements in enumerate(MIGRATIONS[version:], start=version + 1):
                for statement in statements:
                    db.execute(statement)
                db.execute("INSERT INTO schema_version (version) VALUES (?)", (number,))
        self.version = len(MIGRATIONS)

    def size(self) -> int:
        """The database's size in bytes (SQLite: its pages in use; PostgreSQL: the database's)."""
        with self.transaction(write=False) as db:
            if self.kind == "sqlite":
                pages = db.one("PRAGMA page_count")[0] - db.one("PRAGMA freelist_count")[0]
                return pages * db.one("PRAGMA page_size")[0]
            return int(db.one("SELECT pg_database_size(current_database())")[0])

    def close(self) -> None:
        """Closes the connections no transaction holds."""
        with self._lock:
            idle, self._idle = self._idle, []
        for db, _ in idle:
            db.close()


def _transient(err: BaseException) -> bool:
    """Whether the same call may work in a moment: SQLite busy or locked; PostgreSQL's server
    unreachable, restarting or shutting down, a serialization failure, a deadlock."""
    if isinstance(err, sqlite3.OperationalError):
        return any(word in str(err).lower() for word in ("locked", "busy"))
    try:
        import psycopg
    except ImportError:
        return False
    return isinstance(err, psycopg.OperationalError)  # serialization failures and deadlocks are ones too


def _pg_errors() -> type[Exception] | tuple[type[Exception], ...]:
    try:
        import psycopg
    except ImportError:
        return ()
    return psycopg.Error


class Cursor:
    """A cursor that takes SQLite's `?` placeholders on either database."""

    def __init__(self, cursor: Any, mark: str) -> None:
        self._cursor, self._mark = cursor, mark

    def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Runs one statement; how many rows it changed."""
        self._cursor.execute(sql.replace("?", self._mark) if self._mark != "?" else sql, tuple(params))
        return self._cursor.rowcount

    def one(self, sql: str, params: Sequence[Any] = ()) -> tuple | None:
        self.execute(sql, params)
        return self._cursor.fetchone()

    def all(self, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        self.execute(sql, params)
        return list(self._cursor.fetchall())
