"""mlp.rooms: a class's rooms, on SQLite and on a real PostgreSQL (tests/postgres.py)."""

from __future__ import annotations

import collections
import csv
import gc
import io
import math
import sqlite3
import threading
import time

import numpy as np
import pytest

from mlp.rooms import Instructor, Membership, Result, RoomError, Rooms, Store, StoreError, Visitor, limits
from mlp.rooms.outbox import POST_SECONDS
from mlp.rooms.posts import CLOSED, NOT_BETTER, POSTED, QUEUED, TOO_LATE
from mlp.rooms.ranks import show_code
from mlp.rooms.rooms import ALPHABET, CODE_LENGTH, PURGE_SECONDS, read_code
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
    assert Instructor(rooms, room.code, secret).room().title == "Monday's class"
    other, other_secret = rooms.create("Tuesday's")
    assert other.code != room.code and other_secret != secret
    for code, wrong in ((room.code, other_secret), (room.code, ""), ("ZZZZZZZZ", secret)):
        with pytest.raises(RoomError, match="doesn't open a room"):
            Instructor(rooms, code, wrong).room()
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
    member = rooms.join(room.shown_code.lower(), "  Ana \n Lopez\x07 ")
    assert member.nickname == "Ana Lopez" and member.code == room.code
    with pytest.raises(RoomError, match="shows nothing"):  # an invisible character: refused, not dropped
        rooms.join(room.code, "Ana\u200b Lopez")
    with pytest.raises(RoomError, match="already has that nickname"):
        rooms.join(room.code, "ANA LOPEZ")
    with pytest.raises(RoomError, match="at most 24"):
        rooms.join(room.code, "x" * 25)
    with pytest.raises(RoomError, match="already has that nickname, or one that looks the same"):
        rooms.join(room.code, "ＡＮＡ ｌｏｐｅｚ")  # full-width letters: the same name
    for blank in (" \t ", "...", "\x07"):  # nothing, no letter
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
    board = Instructor(rooms, room.code, secret).board()
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
    spiral = next(
        c for c in Instructor(rooms, room.code, secret).board().challenges if c.challenge.key == "spiral-100"
    )
    assert [(e.nickname, e.met) for e in spiral.entries] == [("ben", False)]  # 94% < the goal of 95%


def test_a_loss_challenge_ranks_the_lowest_first_and_its_epochs_bound_what_counts(rooms, clock):
    room, secret = rooms.create("class")
    ana, ben = rooms.join(room.code, "ana"), rooms.join(room.code, "ben")
    assert rooms.post(ana, acc(0.2, epoch=100, challenge="spiral-sgd")) == POSTED
    assert post_later(rooms, clock, ana, acc(0.08, epoch=250, challenge="spiral-sgd"))
    clock.now += POST_SECONDS
    assert rooms.post(ben, acc(0.01, epoch=301, challenge="spiral-sgd")) == TOO_LATE  # within 300
    assert post_later(rooms, clock, ben, acc(0.12, epoch=300, challenge="spiral-sgd"))
    (board,) = Instructor(rooms, room.code, secret).board().challenges
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
    assert later.calls[-1] == pytest.approx(POST_SECONDS / 2)  # the next, when the first is due
    clock.now += POST_SECONDS / 2
    rooms.flush()  # one of ana's waiting posts; the other a second later
    clock.now += POST_SECONDS
    rooms.flush()
    board = {
        c.challenge.key: c.entries[0].score for c in Instructor(rooms, room.code, secret).board().challenges
    }
    assert board == {"circles-4": pytest.approx(0.9), "spiral-100": pytest.approx(0.7)}
    assert rooms.posts.outbox.next_due() is None  # nothing waits
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
    (live,) = Instructor(rooms, room.code, secret).board().challenges
    assert [e.nickname for e in live.entries] == ["ana", "ben", "cy", "dee"]
    assert all(e.final_rank is None for e in live.entries) and not live.closed
    Instructor(rooms, room.code, secret).close_challenge("circles-4")
    (final,) = Instructor(rooms, room.code, secret).board().challenges
    assert final.closed
    assert {e.nickname: e.final_rank for e in final.entries} == {"ben": 1, "cy": 2, "ana": 3, "dee": 4}
    clock.now += POST_SECONDS
    assert rooms.post(members[3], acc(1.0)) == CLOSED  # a closed challenge takes no posts
    with pytest.raises(RoomError, match="doesn't open a room"):
        Instructor(rooms, room.code, "wrong").close_challenge("circles-4")


def test_the_instructor_hides_a_nickname_from_the_board_and_the_csv_keeps_it(rooms, clock):
    room, secret = rooms.create("class")
    ana, rude = rooms.join(room.code, "ana"), rooms.join(room.code, "=HYPERLINK(x)")
    assert post_later(rooms, clock, ana, acc(0.9))
    assert post_later(rooms, clock, rude, acc(0.95))
    Instructor(rooms, room.code, secret).hide("=hyperlink(X)")
    board = Instructor(rooms, room.code, secret).board()
    assert [e.nickname for e in board.challenges[0].entries] == ["ana"]
    assert board.hidden == ["=HYPERLINK(x)"] and board.members == 2
    with pytest.raises(RoomError, match="No one in this room"):
        Instructor(rooms, room.code, secret).hide("nobody")
    rows = list(csv.reader(io.StringIO(Instructor(rooms, room.code, secret).export_csv())))
    assert rows[0][:3] == ["room", "challenge", "nickname"]
    assert [(r[2], r[3], r[10]) for r in rows[1:]] == [
        ("'=HYPERLINK(x)", "0.95", "yes"),
        ("ana", "0.9", "no"),
    ]
    assert all(r[0] == room.shown_code and r[9].startswith("/playground?") for r in rows[1:])
    Instructor(rooms, room.code, secret).hide("=HYPERLINK(x)", hidden=False)
    assert len(Instructor(rooms, room.code, secret).board().challenges[0].entries) == 2


def test_a_closed_room_takes_no_one_and_an_expired_one_is_deleted_with_everything_in_it(rooms, clock, later):
    room, secret = rooms.create("class", minutes=50)
    ana = rooms.join(room.code, "ana")
    assert post_later(rooms, clock, ana, acc(0.9))
    Instructor(rooms, room.code, secret).close_challenge("circles-4")
    Instructor(rooms, room.code, secret).close()
    assert not Instructor(rooms, room.code, secret).room().open
    with pytest.raises(RoomError, match="closed"):
        rooms.join(room.code, "ben")
    with pytest.raises(RoomError, match="closed"):
        post_later(rooms, clock, ana, acc(0.95))
    assert Instructor(rooms, room.code, secret).board().challenges  # the board stays until it expires
    clock.now += 50 * 60
    with pytest.raises(RoomError, match="expired"):
        Instructor(rooms, room.code, secret).room()
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
    assert Instructor(again, room.code, secret).board().challenges[0].entries[0].nickname == "ana"
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
    entries = Instructor(replicas[1], room.code, secret).board().challenges[0].entries
    assert [e.nickname for e in entries] == [f"s{i}" for i in reversed(range(12))]


def test_the_board_reads_while_another_process_holds_sqlites_write_lock(tmp_path, clock):
    """(PostgreSQL's readers never wait for its writers: this is SQLite's case.)"""
    url = f"sqlite:///{tmp_path / 'rooms.sqlite3'}"
    writer, reader = Rooms(Store(url), clock), Rooms(Store(url), clock)
    room, secret = writer.create("class")
    token = writer.join(room.code, "ana").token
    Instructor(reader, room.code, secret).board()  # its purge of expired rooms (a write) is done for a minute
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
        assert Instructor(reader, room.code, secret).board().members == 1  # the last commit, read at once
        assert reader.member(room.code, token).nickname == "ana"
        assert "nickname" in Instructor(reader, room.code, secret).export_csv()
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


# --- a class a room can trust: the attacks, through the library ---------------------------------


def visitor(n: int, browser: bool = True) -> Visitor:
    """A student's machine: its own address and (if it keeps cookies) browser id."""
    return Visitor(f"10.0.{n // 250}.{n % 250}", f"browser-{n:08d}-xxxxxxxx" if browser else None)


def test_leaving_ends_a_membership_its_results_stay_and_its_browser_may_come_back(rooms, clock):
    room, secret = rooms.create("class")
    teacher = Instructor(rooms, room.code, secret)
    ana = rooms.join(room.code, "Ana", visitor(1))
    assert rooms.post(ana, acc(0.9)) == POSTED
    rooms.leave(ana)
    assert rooms.member(room.code, ana.token) is None  # a reload brings nothing back
    with pytest.raises(RoomError, match="not in this room"):
        post_later(rooms, clock, ana, acc(0.99))  # its token posts nothing more...
    with pytest.raises(RoomError, match="not in this room"):
        post_later(rooms, clock, ana, acc(1.0))  # ...at once, from then on
    board = teacher.board()
    assert [(e.nickname, e.gone) for e in board.challenges[0].entries] == [("Ana", True)]  # her result stays
    assert (board.members, board.left) == (0, 1)
    with pytest.raises(RoomError, match="already has that nickname"):  # no one else takes her name
        rooms.join(room.code, "ana", visitor(2))
    back = rooms.join(room.code, "ana", visitor(1))  # her own browser: her place back, as she typed it
    assert back.nickname == "Ana" and back.token != ana.token
    assert post_later(rooms, clock, back, acc(0.95))
    assert [(e.nickname, e.score, e.gone) for e in teacher.board().challenges[0].entries] == [
        ("Ana", 0.95, False)
    ]


def test_joining_costs_more_than_a_new_session(rooms, monkeypatch):
    monkeypatch.setattr(limits, "JOINS_PER_ADDRESS", 5)
    monkeypatch.setattr(limits, "JOINS_PER_ROOM", 9)
    room, _ = rooms.create("class", members=30)
    school = Visitor("203.0.113.7")  # one address, no cookies: every session a new "browser"
    for i in range(5):
        rooms.join(room.code, f"student {i}", school)
    with pytest.raises(RoomError, match="Too many joins from your network"):
        rooms.join(room.code, "student 5", school)
    one_browser = visitor(7)
    for i in range(3):  # nicknames one browser may join under
        rooms.join(room.code, f"alias {i}", one_browser)
    with pytest.raises(RoomError, match="under 3 nicknames already"):
        rooms.join(room.code, "alias 3", one_browser)
    with pytest.raises(RoomError, match="Too many joins into this room"):  # the room's own count: 9 tries
        rooms.join(room.code, "latecomer", visitor(8))


def test_a_room_takes_its_cap_and_a_locked_room_no_one_new(rooms, clock):
    room, secret = rooms.create("class", members=3)
    teacher = Instructor(rooms, room.code, secret)
    members = [rooms.join(room.code, name, visitor(i)) for i, name in enumerate(("ana", "ben", "cy"))]
    with pytest.raises(RoomError, match=r"full \(3 students\)"):
        rooms.join(room.code, "dee", visitor(3))
    teacher.set_member_cap(4)
    dee = rooms.join(room.code, "dee", visitor(3))
    teacher.lock()
    with pytest.raises(RoomError, match="locked this room"):
        rooms.join(room.code, "eve", visitor(4))
    assert teacher.room().locked
    assert post_later(rooms, clock, members[0], acc(0.9))  # those in it keep posting
    rooms.leave(dee)
    assert rooms.join(room.code, "dee", visitor(3)).nickname == "dee"  # and come back, locked or not
    teacher.lock(False)
    rooms.join(room.code, "eve", visitor(5)) if False else None
    with pytest.raises(RoomError, match="2 to 500 students"):
        teacher.set_member_cap(1)


def test_the_instructor_removes_students_and_their_browser_and_network_stay_out(rooms, clock):
    room, secret = rooms.create("class")
    teacher = Instructor(rooms, room.code, secret)
    ana, troll, alias = (
        rooms.join(room.code, n, visitor(i)) for i, n in enumerate(("ana", "troll", "alias"))
    )
    for member in (ana, troll, alias):
        assert rooms.post(member, acc(0.9)) == POSTED
    assert teacher.remove(["troll", "ALIAS"]) == 2  # several at once, found whatever the case
    board = teacher.board()
    assert [e.nickname for e in board.challenges[0].entries] == ["ana"]  # off the board
    assert sorted(board.removed) == ["alias", "troll"] and board.members == 1
    with pytest.raises(RoomError, match="not in this room"):
        post_later(rooms, clock, troll, acc(1.0))  # their tokens post nothing
    refused = "removed someone from this room on this browser or this network"
    with pytest.raises(RoomError, match=refused):
        rooms.join(room.code, "troll 2", visitor(1))  # the same browser and address
    with pytest.raises(RoomError, match=refused):
        rooms.join(
            room.code, "troll 3", Visitor(visitor(1).address, "a-fresh-browser-id-000")
        )  # cookies cleared
    with pytest.raises(RoomError, match=refused):
        rooms.join(room.code, "troll 4", Visitor("198.51.100.9", visitor(1).browser))  # another network
    with pytest.raises(RoomError, match="already has that nickname"):
        rooms.join(room.code, "troll", visitor(9))  # and no one else takes the name
    rows = {r["nickname"]: r for r in csv.DictReader(io.StringIO(teacher.export_csv()))}
    assert rows["troll"]["removed"] == "yes" and rows["ana"]["removed"] == "no"  # the CSV keeps them
    assert teacher.let_in(["alias"]) == 1
    assert rooms.join(room.code, "alias again", visitor(2)).nickname == "alias again"
    assert sorted(e.nickname for e in teacher.board().challenges[0].entries) == ["alias", "ana"]


def test_the_instructor_hides_several_at_once(rooms, clock):
    room, secret = rooms.create("class")
    teacher = Instructor(rooms, room.code, secret)
    for i, name in enumerate(("ana", "ben", "cy", "dee")):
        assert rooms.post(rooms.join(room.code, name, visitor(i)), acc(0.9 - i / 100)) == POSTED
    assert teacher.hide(["ben", "CY"]) == 2
    board = teacher.board()
    assert [e.nickname for e in board.challenges[0].entries] == ["ana", "dee"]
    assert sorted(board.hidden) == ["ben", "cy"] and sorted(board.nicknames) == ["ana", "ben", "cy", "dee"]
    teacher.hide(["ben", "cy"], hidden=False)
    assert len(teacher.board().challenges[0].entries) == 4


def test_rooms_are_capped_per_address_and_in_all_and_the_database_by_size(rooms, monkeypatch):
    office = Visitor("192.0.2.1")
    rooms_open = [rooms.create(f"class {i}", visitor=office) for i in range(3)]
    with pytest.raises(RoomError, match="3 rooms open already"):
        rooms.create("class 4", visitor=office)
    Instructor(rooms, rooms_open[0][0].code, rooms_open[0][1]).close()  # closing one frees a place
    rooms.create("class 4", visitor=office)
    monkeypatch.setattr(limits, "OPENS_PER_ADDRESS", 4)
    for i in range(2):
        Instructor(rooms, rooms_open[i + 1][0].code, rooms_open[i + 1][1]).close()
    with pytest.raises(RoomError, match="started 10 rooms this hour"):
        rooms.create("class 5", visitor=office)
    monkeypatch.setattr(limits, "MAX_ROOMS", 1)  # "class 4" is the one open room
    with pytest.raises(RoomError, match="rooms open, as many as it takes"):
        rooms.create("elsewhere", visitor=Visitor("192.0.2.2"))
    monkeypatch.setattr(limits, "MAX_ROOMS", 200)
    room, _ = rooms.create("elsewhere", visitor=Visitor("192.0.2.3"))
    monkeypatch.setenv(limits.DATABASE_MB_VAR, "1")
    monkeypatch.setattr(rooms.store, "size", lambda: 2 * 1024 * 1024)  # a database past its cap
    rooms.gate._sized = (-math.inf, 0)
    with pytest.raises(RoomError, match="database is full"):
        rooms.create("one more", visitor=Visitor("192.0.2.4"))
    with pytest.raises(RoomError, match="database is full"):
        rooms.join(room.code, "ana", visitor(1))


def test_a_board_draws_the_top_rows_and_counts_the_rest(rooms, monkeypatch):
    room, secret = rooms.create("class", members=200)
    for i in range(120):
        assert rooms.post(rooms.join(room.code, f"s{i}", visitor(i)), acc(i / 200)) == POSTED
    (board,) = Instructor(rooms, room.code, secret).board().challenges
    assert len(board.entries) == limits.TOP_ROWS and board.more == 120 - limits.TOP_ROWS
    assert (board.count, board.entries[0].nickname, board.entries[0].rank) == (120, "s119", 1)


def test_a_replaced_secret_opens_nothing(rooms):
    room, secret = rooms.create("class")
    teacher = Instructor(rooms, room.code, secret)
    fresh = teacher.new_secret()
    assert fresh != secret and teacher.secret == fresh
    with pytest.raises(RoomError, match="mistyped or replaced"):
        Instructor(rooms, room.code, secret)
    assert Instructor(rooms, room.code, fresh).room().code == room.code


def test_the_hidden_part_comes_from_a_secret_the_room_keeps(rooms):
    from mlp.curriculum.challenges import CHALLENGES, hidden_points
    from mlp.lessons import playground as pg

    settings = pg.from_query(CHALLENGES["moons-20"].start.query)[0]
    public = hidden_points(settings)  # what anyone computes from the setup and the source
    seeds = []
    for i in range(2):
        room, _ = rooms.create(f"class {i}")
        ana = rooms.join(room.code, "ana", visitor(i))
        seeds.append(rooms.hidden_seed(ana, "moons-20"))
        assert seeds[-1] == rooms.room_seed(room.code, "moons-20") != rooms.room_seed(room.code, "circles-4")
        rooms.leave(ana)
        assert rooms.hidden_seed(ana, "moons-20") is None  # only a member's page is told
    assert seeds[0] != seeds[1]
    X, _ = hidden_points(settings, seeds[0])
    assert len(X) == len(public[0]) and not np.isin(X, public[0]).all(axis=1).any()
    with rooms.store.transaction() as db:
        keys = [k for (k,) in db.all("SELECT hidden_key FROM rooms")]
    assert all(len(k) == 64 for k in keys) and len(set(keys)) == len(keys)  # 256 random bits each


def test_a_post_the_database_cant_take_waits_and_is_written_once_it_can(tmp_path):
    """SQLite's write lock held for three seconds by another process's write: the posts that meet
    it wait (WAITING), the page's run isn't held up, and every one is on the board afterwards."""
    url = f"sqlite:///{tmp_path / 'rooms.sqlite3'}"
    rooms, other = Rooms(Store(url)), Store(url)
    room, secret = rooms.create("class")
    members = [rooms.join(room.code, f"s{i}", visitor(i)) for i in range(6)]
    holding, release = threading.Event(), threading.Event()

    def hold() -> None:
        with other.transaction():
            holding.set()
            release.wait(30)

    thread = threading.Thread(target=hold)
    thread.start()
    try:
        holding.wait(10)
        answers, slowest = [], 0.0
        for i, member in enumerate(members):
            started = time.monotonic()
            answers.append(rooms.post(member, acc(0.5 + i / 100)))
            slowest = max(slowest, time.monotonic() - started)
        assert set(answers) == {"waiting"}
        assert slowest < 3.0  # the first waits out the busy timeout (2 s); the rest don't ask
        time.sleep(3.0)  # the lock is held longer than a busy timeout
    finally:
        release.set()
        thread.join()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # the outbox retries, later each time, until it is in
        entries = Instructor(rooms, room.code, secret).board().challenges
        if entries and entries[0].count == len(members):
            break
        time.sleep(0.2)
    assert sorted(e.nickname for e in entries[0].entries) == sorted(m.nickname for m in members)
    assert rooms.post(members[0], acc(0.5)) == NOT_BETTER  # and the page, asking again, hears it is there


def test_a_transient_failure_is_told_apart_from_a_lasting_one(tmp_path):
    from mlp.rooms.store import _transient

    assert _transient(sqlite3.OperationalError("database is locked"))
    assert not _transient(sqlite3.OperationalError("no such table: rooms"))
    assert not _transient(sqlite3.IntegrityError("UNIQUE constraint failed"))
    try:
        import psycopg
    except ImportError:
        return
    assert _transient(psycopg.OperationalError("the database system is starting up"))
    assert not _transient(psycopg.errors.UndefinedTable("relation does not exist"))


@pytest.mark.slow
def test_a_postgresql_restart_in_the_middle_of_a_class_loses_no_result():
    """A class of 30 whose pages check every half second, on a real PostgreSQL that stops for 3
    seconds and starts again; each student's last (best) result comes while it is down. A page
    keeps a result pending until the store says it is on the board, and asks again at each check
    (pages/ui/rooms.post_best): every one of them is on the board afterwards. (Before: a page
    took "queued" for posted and never asked again, and the store dropped what the database
    refused: none of the 30 was on the board.)"""
    from tests.postgres import missing, postgres_server, start_server, stop_server

    if missing():
        pytest.skip(missing())
    with postgres_server() as server:
        url = new_database(server, "restart")
        rooms = Rooms(Store(url))
        room, secret = rooms.create("class", members=30)
        members = [rooms.join(room.code, f"s{i}", visitor(i)) for i in range(30)]
        best, said = {}, {}  # each student's best so far, and what the store last said of it
        answers = collections.Counter()

        def check(step: int | None) -> None:  # each page's check: a better result, or the pending one again
            for i, member in enumerate(members):
                if step is not None:
                    best[member.nickname] = round(0.5 + (step * 30 + i) / 10_000, 4)
                elif said.get(member.nickname) in (POSTED, NOT_BETTER):
                    continue
                try:
                    answer = rooms.post(member, acc(best[member.nickname], epoch=10), inline=False)
                except Exception as err:  # a page would say it: counted, nothing kept here
                    answer = type(err).__name__
                said[member.nickname] = answer
                answers[answer] += 1

        for step in range(4):
            check(step)
            time.sleep(0.5)
        stop_server(url)
        for step in range(4, 10):  # the database is down: the class's best results come now
            check(step)
            time.sleep(0.5)
        start_server(url)
        deadline = time.monotonic() + 90
        while any(a not in (POSTED, NOT_BETTER) for a in said.values()):  # the pages' checks go on
            assert time.monotonic() < deadline, collections.Counter(said.values())
            check(None)
            time.sleep(0.5)
        (board,) = Instructor(rooms, room.code, secret).board().challenges
        print(f"\nanswers during the class: {dict(answers)}")
        assert {e.nickname: e.score for e in board.entries} == best
        assert answers["waiting"] > 0


def test_a_sweep_while_the_database_is_away_says_so_in_a_line_and_comes_back(tmp_path, clock, later, caplog):
    rooms = Rooms(Store(f"sqlite:///{tmp_path / 'rooms.db'}"), clock, later)

    def away():
        raise StoreError("The rooms' database failed: {}", "connection refused", transient=True)

    rooms.store.transaction = away
    with caplog.at_level("WARNING", logger="mlp.rooms.rooms"):
        rooms._sweep()
    assert later.sweeps == [0.0, PURGE_SECONDS]  # the next round is still due
    (record,) = caplog.records
    assert "connection refused" in record.getMessage() and not record.exc_info

    def broken():
        raise ZeroDivisionError("a fault")

    rooms.store.transaction = broken
    caplog.clear()
    with caplog.at_level("WARNING", logger="mlp.rooms.rooms"):
        rooms._sweep()
    assert later.sweeps == [0.0, PURGE_SECONDS, PURGE_SECONDS]
    (record,) = caplog.records
    assert record.exc_info  # a fault that isn't the database away: its traceback


def test_a_rooms_let_go_stops_sweeping(tmp_path, clock):
    calls = []
    rooms = Rooms(Store(f"sqlite:///{tmp_path / 'rooms.db'}"), clock, lambda s, call: calls.append(call))
    (first,) = calls
    first()  # a round: the next one is due
    assert len(calls) == 2
    del rooms
    gc.collect()
    calls[-1]()  # the timer fires on a Rooms nobody holds: nothing, and no round after it
    assert len(calls) == 2
