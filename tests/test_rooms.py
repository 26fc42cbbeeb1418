"""mlp.rooms: a class's rooms, on SQLite and on a real PostgreSQL (tests/postgres.py)."""

from __future__ import annotations

import csv
import io
import threading
import time

import pytest

from mlp.rooms import Membership, Result, RoomError, Rooms, Store, StoreError
from mlp.rooms.rooms import (
    ALPHABET,
    CLOSED,
    CODE_LENGTH,
    NOT_BETTER,
    POST_SECONDS,
    POSTED,
    PURGE_SECONDS,
    QUEUED,
    TOO_LATE,
    read_code,
    show_code,
)
from mlp.rooms.store import MIGRATIONS, default_url, safe_url
from tests.postgres import new_database


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request, tmp_path) -> str:
    """A fresh, empty database: a SQLite file, or a new database on the session's PostgreSQL."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'rooms.sqlite3'}"
    return new_database(request.getfixturevalue("postgres_url"), "rooms")


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


class Later:
    """Rooms' timer, by hand: what it was asked to call, and when."""

    def __init__(self) -> None:
        self.calls: list[float] = []  # flush's
        self.sweeps: list[float] = []  # the purge's rounds

    def __call__(self, seconds: float, call) -> None:
        (self.sweeps if call.__name__ == "_sweep" else self.calls).append(seconds)


@pytest.fixture
def later() -> Later:
    return Later()


@pytest.fixture
def rooms(url, clock, later) -> Rooms:
    return Rooms(Store(url), clock, later)


def acc(value: float, epoch: int = 10, challenge: str = "circles-4", hidden: float | None = None) -> Result:
    return Result(challenge, value, hidden, epoch, 21, f"/playground?challenge={challenge}&seed=1")


def post_later(rooms: Rooms, clock: Clock, member: Membership, result: Result) -> bool:
    """Whether `result`, posted a second later, was kept (POSTED); any other answer is False."""
    clock.now += POST_SECONDS
    return rooms.post(member, result) == POSTED


def test_a_room_has_a_code_for_the_projector_and_a_secret_only_the_instructor_holds(rooms):
    room, secret = rooms.create("Monday's class")
    assert len(room.code) == CODE_LENGTH and set(room.code) <= set(ALPHABET)
    assert room.shown_code == f"{room.code[:4]}-{room.code[4:]}" and room.open
    assert rooms.instructed(room.code, secret).title == "Monday's class"
    other, other_secret = rooms.create("Tuesday's")
    assert other.code != room.code and other_secret != secret
    for code, wrong in ((room.code, other_secret), (room.code, ""), ("ZZZZZZZZ", secret)):
        with pytest.raises(RoomError, match="doesn't open a room"):
            rooms.instructed(code, wrong)
    # the database keeps a digest of the secret, never the secret
    with rooms.store.transaction() as db:
        assert secret not in {row[0] for row in db.all("SELECT secret FROM rooms")}


def test_codes_read_as_typed_and_bad_ones_get_a_clear_message(rooms):
    assert read_code("abcd efgh") == "ABCDEFGH" and read_code(show_code("K7MQ2XPW")) == "K7MQ2XPW"
    assert read_code("ABCD-EFG0") is None  # no 0: it reads as O on a projector
    for text in ("", "ABC", "ABCD-EFGHJ", "<b>ABCDEFGH</b>"):
        with pytest.raises(RoomError, match="8 letters and digits"):
            rooms.join(text, "ana")
    with pytest.raises(RoomError, match="no open room with that code"):
        rooms.join("ABCD-EFGH", "ana")


def test_nicknames_are_cleaned_capped_and_unique_in_a_room(rooms):
    room, _ = rooms.create("class")
    member = rooms.join(room.shown_code.lower(), "  Ana\u200b \n Lopez\x07 ")
    assert member.nickname == "Ana Lopez" and member.code == room.code
    with pytest.raises(RoomError, match="already has that nickname"):
        rooms.join(room.code, "ANA LOPEZ")
    with pytest.raises(RoomError, match="at most 24"):
        rooms.join(room.code, "x" * 25)
    with pytest.raises(RoomError, match="already has that nickname"):
        rooms.join(room.code, "ＡＮＡ ｌｏｐｅｚ")  # full-width letters: the same name
    for blank in (" \u200b\t ", "\u3164\u3164", "..."):  # nothing, a Hangul filler, no letter
        with pytest.raises(RoomError, match="empty"):
            rooms.join(room.code, blank)
    markup = rooms.join(room.code, "**bold** <script>")  # kept as typed: the page shows it literally
    assert markup.nickname == "**bold** <script>"


def test_a_member_keeps_their_best_result_and_the_board_ranks_them(rooms, clock):
    room, secret = rooms.create("class")
    ana, ben, cy = (rooms.join(room.code, name) for name in ("ana", "ben", "cy"))
    assert rooms.post(ana, acc(0.90)) == POSTED
    clock.now += POST_SECONDS
    assert rooms.post(ana, acc(0.85)) == NOT_BETTER  # worse: the best stays
    assert post_later(rooms, clock, ana, acc(0.97, epoch=40))
    assert post_later(rooms, clock, ben, acc(0.96))
    assert post_later(rooms, clock, cy, acc(0.97))  # ties with ana, later: ranks after her
    board = rooms.board(room.code, secret)
    (circles,) = board.challenges
    assert [(e.nickname, e.rank, e.met) for e in circles.entries] == [
        ("ana", 1, True),
        ("cy", 2, True),
        ("ben", 3, True),
    ]
    assert circles.entries[0].epoch == 40 and circles.entries[0].score == pytest.approx(0.97)
    assert (circles.count, circles.met, board.members) == (3, 3, 3)
    assert not post_later(rooms, clock, ben, acc(0.5))
    assert post_later(rooms, clock, ben, acc(0.94, challenge="spiral-100"))
    spiral = next(c for c in rooms.board(room.code, secret).challenges if c.challenge.key == "spiral-100")
    assert [(e.nickname, e.met) for e in spiral.entries] == [("ben", False)]  # 94% < the goal of 95%


def test_a_loss_challenge_ranks_the_lowest_first_and_its_epochs_bound_what_counts(rooms, clock):
    room, secret = rooms.create("class")
    ana, ben = rooms.join(room.code, "ana"), rooms.join(room.code, "ben")
    assert rooms.post(ana, acc(0.2, epoch=100, challenge="spiral-sgd")) == POSTED
    assert post_later(rooms, clock, ana, acc(0.08, epoch=250, challenge="spiral-sgd"))
    clock.now += POST_SECONDS
    assert rooms.post(ben, acc(0.01, epoch=301, challenge="spiral-sgd")) == TOO_LATE  # within 300
    assert post_later(rooms, clock, ben, acc(0.12, epoch=300, challenge="spiral-sgd"))
    (board,) = rooms.board(room.code, secret).challenges
    assert [(e.nickname, e.met) for e in board.entries] == [("ana", True), ("ben", False)]


def test_a_member_writes_once_a_second_and_only_a_member_can_post(rooms, clock, later):
    room, secret = rooms.create("class")
    ana = rooms.join(room.code, "ana")
    assert rooms.post(ana, acc(0.5)) == POSTED
    clock.now += POST_SECONDS / 2
    assert rooms.post(ana, acc(0.8)) == QUEUED  # too soon: it waits for ana's next second
    assert rooms.post(ana, acc(0.9)) == QUEUED  # the latest replaces it
    assert rooms.post(ana, acc(0.7, challenge="spiral-100")) == QUEUED  # another challenge waits too
    assert later.calls == [pytest.approx(POST_SECONDS / 2)]  # one timer for ana
    rooms.flush()  # a timer that came early (the clock has not moved): nothing written yet
    assert later.calls[-1] == pytest.approx(POST_SECONDS / 4)
    clock.now += POST_SECONDS / 2
    rooms.flush()  # one of ana's waiting posts; the other a second later
    clock.now += POST_SECONDS
    rooms.flush()
    board = {c.challenge.key: c.entries[0].score for c in rooms.board(room.code, secret).challenges}
    assert board == {"circles-4": pytest.approx(0.9), "spiral-100": pytest.approx(0.7)}
    assert rooms._pace.due(clock.now) == ([], False)
    forged = Membership(room.code, "ana", "not-a-token")
    with pytest.raises(RoomError, match="not in this room"):
        post_later(rooms, clock, forged, acc(1.0))
    with pytest.raises(RoomError, match="inside the app"):
        post_later(rooms, clock, ana, Result("circles-4", 1.0, None, 1, 21, "https://example.com/x"))
    with pytest.raises(RoomError, match="no score"):
        post_later(rooms, clock, ana, acc(float("nan")))
    with pytest.raises(RoomError, match="no such challenge"):
        post_later(rooms, clock, ana, acc(1.0, challenge="nope"))


def test_closing_a_challenge_ranks_it_again_on_the_hidden_points(rooms, clock):
    room, secret = rooms.create("class")
    members = [rooms.join(room.code, name) for name in ("ana", "ben", "cy", "dee")]
    # ana fitted the visible points best and the hidden ones worst; dee posted no hidden score
    for member, visible, hidden in zip(
        members, (0.99, 0.97, 0.96, 0.95), (0.90, 0.96, 0.95, None), strict=True
    ):
        assert post_later(rooms, clock, member, acc(visible, hidden=hidden))
    (live,) = rooms.board(room.code, secret).challenges
    assert [e.nickname for e in live.entries] == ["ana", "ben", "cy", "dee"]
    assert all(e.final_rank is None for e in live.entries) and not live.closed
    rooms.close_challenge(room.code, secret, "circles-4")
    (final,) = rooms.board(room.code, secret).challenges
    assert final.closed
    assert {e.nickname: e.final_rank for e in final.entries} == {"ben": 1, "cy": 2, "ana": 3, "dee": 4}
    clock.now += POST_SECONDS
    assert rooms.post(members[3], acc(1.0)) == CLOSED  # a closed challenge takes no posts
    with pytest.raises(RoomError, match="doesn't open a room"):
        rooms.close_challenge(room.code, "wrong", "circles-4")


def test_the_instructor_hides_a_nickname_from_the_board_and_the_csv_keeps_it(rooms, clock):
    room, secret = rooms.create("class")
    ana, rude = rooms.join(room.code, "ana"), rooms.join(room.code, "=HYPERLINK(x)")
    assert post_later(rooms, clock, ana, acc(0.9))
    assert post_later(rooms, clock, rude, acc(0.95))
    rooms.hide(room.code, secret, "=hyperlink(X)")
    board = rooms.board(room.code, secret)
    assert [e.nickname for e in board.challenges[0].entries] == ["ana"]
    assert board.hidden == ["=HYPERLINK(x)"] and board.members == 2
    with pytest.raises(RoomError, match="No one in this room"):
        rooms.hide(room.code, secret, "nobody")
    rows = list(csv.reader(io.StringIO(rooms.export_csv(room.code, secret))))
    assert rows[0][:3] == ["room", "challenge", "nickname"]
    assert [(r[2], r[3], r[10]) for r in rows[1:]] == [
        ("'=HYPERLINK(x)", "0.95", "yes"),
        ("ana", "0.9", "no"),
    ]
    assert all(r[0] == room.shown_code and r[9].startswith("/playground?") for r in rows[1:])
    rooms.hide(room.code, secret, "=HYPERLINK(x)", hidden=False)
    assert len(rooms.board(room.code, secret).challenges[0].entries) == 2


def test_a_closed_room_takes_no_one_and_an_expired_one_is_deleted_with_everything_in_it(rooms, clock, later):
    room, secret = rooms.create("class", minutes=50)
    ana = rooms.join(room.code, "ana")
    assert post_later(rooms, clock, ana, acc(0.9))
    rooms.close_challenge(room.code, secret, "circles-4")
    rooms.close(room.code, secret)
    assert not rooms.instructed(room.code, secret).open
    with pytest.raises(RoomError, match="closed"):
        rooms.join(room.code, "ben")
    with pytest.raises(RoomError, match="closed"):
        post_later(rooms, clock, ana, acc(0.95))
    assert rooms.board(room.code, secret).challenges  # the board stays until it expires
    clock.now += 50 * 60
    with pytest.raises(RoomError, match="expired"):
        rooms.instructed(room.code, secret)
    rooms._sweep()  # the timer's round: every PURGE_SECONDS, visitors or not
    assert later.sweeps == [0.0, PURGE_SECONDS]
    with rooms.store.transaction() as db:
        for table in ("rooms", "members", "results", "closed_challenges"):
            assert db.one(f"SELECT COUNT(*) FROM {table}")[0] == 0, table
    with pytest.raises(RoomError, match="1 to 720 minutes"):
        rooms.create("class", minutes=0)


def test_rooms_outlive_the_process_and_replicas_share_them(url, clock):
    first = Rooms(Store(url), clock)
    room, secret = first.create("class")
    ana = first.join(room.code, "ana")
    assert first.post(ana, acc(0.9)) == POSTED
    first.store.close()
    again = Rooms(Store(url), clock)  # a restarted server, or another replica
    assert again.board(room.code, secret).challenges[0].entries[0].nickname == "ana"
    clock.now += POST_SECONDS
    assert again.post(ana, acc(0.95)) == POSTED  # the member's token works on any replica


def test_two_replicas_posting_at_once_lose_nothing(url, clock):
    replicas = [Rooms(Store(url), clock) for _ in range(2)]
    room, secret = replicas[0].create("class")
    members = [replicas[i % 2].join(room.code, f"s{i}") for i in range(12)]
    errors = []

    def student(i: int) -> None:
        try:
            assert replicas[i % 2].post(members[i], acc(0.5 + i / 100)) == POSTED
        except Exception as err:
            errors.append(err)

    threads = [threading.Thread(target=student, args=(i,)) for i in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors
    entries = replicas[1].board(room.code, secret).challenges[0].entries
    assert [e.nickname for e in entries] == [f"s{i}" for i in reversed(range(12))]


def test_the_board_reads_while_another_process_holds_sqlites_write_lock(tmp_path, clock):
    """(PostgreSQL's readers never wait for its writers: this is SQLite's case.)"""
    url = f"sqlite:///{tmp_path / 'rooms.sqlite3'}"
    writer, reader = Rooms(Store(url), clock), Rooms(Store(url), clock)
    room, secret = writer.create("class")
    token = writer.join(room.code, "ana").token
    reader.board(room.code, secret)  # its purge of expired rooms (a write) is done for a minute
    holding, done = threading.Event(), threading.Event()

    def hold() -> None:  # a long write elsewhere: on SQLite, the file's one write lock
        with writer.store.transaction():
            holding.set()
            done.wait(30)

    thread = threading.Thread(target=hold)
    thread.start()
    try:
        holding.wait(10)
        started = time.monotonic()
        assert reader.board(room.code, secret).members == 1  # the last commit, read at once
        assert reader.member(room.code, token).nickname == "ana"
        assert "nickname" in reader.export_csv(room.code, secret)
        assert time.monotonic() - started < 5  # a queued reader would wait out the 10 s busy timeout
    finally:
        done.set()
        thread.join()


def test_the_app_makes_its_schema_and_refuses_a_newer_one(url):
    store = Store(url)
    with store.transaction() as db:
        assert db.one("SELECT MAX(version) FROM schema_version")[0] == len(MIGRATIONS)
    Store(url)  # migrating again changes nothing
    with store.transaction() as db:
        assert db.one("SELECT COUNT(*) FROM schema_version")[0] == len(MIGRATIONS)
        db.execute("INSERT INTO schema_version (version) VALUES (?)", (len(MIGRATIONS) + 1,))
    with pytest.raises(StoreError, match="newer than this app"):
        Store(url)


def test_the_database_is_one_setting_with_clear_messages(monkeypatch, tmp_path):
    monkeypatch.delenv("MLP_DATABASE_URL", raising=False)
    monkeypatch.setenv("MLP_PLAYGROUND_STATE", str(tmp_path / "state"))
    assert default_url() == f"sqlite:///{tmp_path / 'state' / 'rooms.sqlite3'}"
    Store()
    assert (tmp_path / "state" / "rooms.sqlite3").exists()
    monkeypatch.setenv("MLP_DATABASE_URL", "mysql://db/rooms")
    with pytest.raises(StoreError, match="must start with sqlite:// or postgresql://"):
        Store()
    monkeypatch.setenv("MLP_DATABASE_URL", "postgresql://mlp:hunter2@127.0.0.1:1/rooms")
    with pytest.raises(StoreError) as failed:
        Store()
    assert "hunter2" not in str(failed.value) and "mlp:***@127.0.0.1:1" in str(failed.value)
    assert safe_url("postgresql://u:p@h:5432/d") == "postgresql://u:***@h:5432/d"
    in_memory = Store("sqlite:///:memory:")
    with in_memory.transaction() as db:
        assert db.one("SELECT COUNT(*) FROM rooms")[0] == 0


def test_runs_on_threads_of_their_own_share_a_few_connections(url):
    """Streamlit runs each script run on a new thread: the store must not open a connection a run."""
    store = Store(url)
    opened = []
    connect = store._connect
    store._connect = lambda: opened.append(1) or connect()

    def run() -> None:
        with store.transaction() as db:
            db.one("SELECT COUNT(*) FROM rooms")

    for _ in range(30):  # one after another, each on its own thread, as a class's reruns are
        thread = threading.Thread(target=run)
        thread.start()
        thread.join(30)
    assert not opened  # the migration's connection, kept, serves them all
    with pytest.raises(RuntimeError), store.transaction() as db:  # a failing block rolls back
        db.execute("INSERT INTO rooms (code, secret, title, created, expires) VALUES ('X', 's', 't', 0, 1)")
        raise RuntimeError("the block failed")
    with store.transaction() as db:
        assert db.one("SELECT COUNT(*) FROM rooms")[0] == 0
    store.close()
