"""The class board (pages/board.py) and a student's room (pages/ui/rooms.py): AppTest for the
pages' own logic, Chromium for a class: an instructor and students in separate browser contexts,
on SQLite, on PostgreSQL, and across two replicas behind nginx on PostgreSQL."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import shutil
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from urllib.parse import urlencode

import numpy as np
import pytest
from playwright.sync_api import expect
from streamlit.testing.v1 import AppTest

from deploy.replicas import healthy, nginx_path, replica_env, site_config, start_nginx, stop
from deploy.supervisor import Replicas
from mlp.curriculum.challenges import CHALLENGES, hidden_points, playground_scores
from mlp.data.toy import HIDDEN_SEED
from mlp.lessons import playground as pg
from mlp.rooms import Instructor, Result, RoomError, Rooms, Store, StoreError, Visitor
from mlp.runs.playground import Playground
from pages.ui.rooms import hidden_score, shared_rooms
from tests.conftest import ARTIFACTS, ROOT, _require_browser, open_page
from tests.harness import button, free_port, open_tab, serve_app, wait_for_app
from tests.postgres import new_database
from tests.test_page_mnist import train

# --- AppTest ----------------------------------------------------------------------------------


def board_page(code: str, secret: str, query: dict[str, str] | None = None) -> AppTest:
    """The board as an instructor link opens it (its secret read from the address's fragment by
    a component, which AppTest doesn't run: handed to the session here)."""
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    for key, value in (query or {}).items():
        app.query_params[key] = value
    app.session_state["board_room"] = (code, secret)
    app.switch_page("pages/board.py").run()
    assert not app.exception, app.exception
    return app


def written(seconds: float = 30) -> None:
    """Until the app's rooms have written every post waiting in their outbox."""
    deadline = time.monotonic() + seconds
    while not shared_rooms().posts.settled():
        assert time.monotonic() < deadline, "posts still waiting"
        time.sleep(0.05)


def a_room(title: str = "class", **kwargs) -> tuple[Rooms, object, str]:
    rooms = Rooms(Store())
    room, secret = rooms.create(title, **kwargs)
    return rooms, room, secret


def test_the_board_starts_a_room_and_shows_its_links_with_the_name_as_typed():
    app = open_page("pages/board.py")
    app.text_input(key="board_title").set_value("Friday <b>ML</b> **now**")
    assert app.number_input(key="board_members").value == 60  # a class's cap, to begin with
    app.number_input(key="board_members").set_value(25)
    app.button(key="FormSubmitter:board_start-Start a room").click().run()
    assert not app.exception
    code, secret = app.session_state["board_room"]
    join, instructor = (c.value for c in app.code)
    assert join.endswith(f"/?room={code[:4]}-{code[4:]}")
    assert instructor.endswith(f"/board?room={code}#key={secret}")  # a fragment: sent to no server
    shown = "".join(h.proto.body for h in app.get("html"))
    assert "Friday &lt;b&gt;ML&lt;/b&gt; **now**" in shown  # escaped: shown as typed
    assert "No results yet" in app.info[0].value
    assert app.number_input(key="board_cap").value == 25 and app.toggle(key="board_locked").value is False
    assert not [e for e in app.sidebar.expander if e.label == "Class room"]  # the board joins no room


def test_an_idle_boards_redraw_sends_the_same_rows_each_with_its_hide_button():
    rooms, room, secret = a_room()
    ana, ben = (
        rooms.join(room.code, "<i>ana</i>", Visitor("10.0.0.1")),
        rooms.join(room.code, "ben", Visitor("10.0.0.2")),
    )
    rooms.post(ana, Result("moons-20", 0.99, 0.99, 5, 100, "/playground?seed=3"))
    earlier = Rooms(rooms.store, clock=lambda: time.time() - 90)  # a result a minute and a half old
    earlier.post(ben, Result("moons-20", 0.9, 0.9, 5, 100, "/playground?seed=4"))
    app = board_page(room.code, secret)

    def drawn() -> dict[str, dict]:  # pages/ui/live_html.py's parts, by key
        return {e.proto.id.split("-", 2)[-1]: json.loads(e.proto.json) for e in app.get("bidi_component")}

    first = drawn()
    row, older = first["board_ranks_moons-20"]["rows"]
    assert "<td>&lt;i&gt;ana&lt;/i&gt;</td>" in row and "<td>just now</td>" in row  # to the minute
    assert "<td>ben</td>" in older and "<td>1 min ago</td>" in older
    assert 'data-value="&lt;i&gt;ana&lt;/i&gt;" aria-label="Hide &lt;i&gt;ana&lt;/i&gt;">Hide</button>' in row
    assert "<svg" in first["board_chart_moons-20"]["frame"]
    app.run()  # the next redraw, nothing new: the same HTML, which the browser leaves as it is
    assert drawn() == first


def test_an_instructor_link_with_its_key_in_the_query_opens_nothing_and_says_why():
    _, room, secret = a_room()
    app = open_page("pages/board.py", {"room": room.code, "key": secret})  # as servers log it
    assert "key" not in app.query_params  # off the address bar at once (a projector shows it)
    assert "board_room" not in app.session_state
    assert "no longer open a board" in app.error[0].value and secret not in app.error[0].value
    assert app.button(key="FormSubmitter:board_start-Start a room")  # start one instead


def test_the_instructor_replaces_a_leaked_link_and_the_old_one_opens_nothing():
    rooms, room, secret = a_room()
    app = board_page(room.code, secret)
    app.button(key="board_new_secret").click().run()
    code, fresh = app.session_state["board_room"]
    assert code == room.code and fresh != secret
    assert app.code[1].value.endswith(f"#key={fresh}")  # the new link, shown
    assert Instructor(rooms, code, fresh).room().code == code
    stale = board_page(room.code, secret)  # the leaked link, on another screen
    assert "doesn't open a room" in stale.error[0].value and "board_room" not in stale.session_state


def test_the_instructor_locks_caps_hides_and_removes_students_from_the_board():
    rooms, room, secret = a_room()
    members = {
        n: rooms.join(room.code, n, Visitor(f"10.0.1.{i}", f"browser-{i:020d}"))
        for i, n in enumerate(("ana", "**ben**", "cy"))
    }
    for member in members.values():
        rooms.post(member, Result("moons-20", 0.9, 0.9, 5, 100, "/playground?seed=1"))
    app = board_page(room.code, secret)
    app.toggle(key="board_locked").set_value(True).run()
    app.number_input(key="board_cap").set_value(3).run()
    assert Instructor(rooms, room.code, secret).room().locked
    with pytest.raises(RoomError, match="locked"):
        rooms.join(room.code, "dee", Visitor("10.0.1.9"))
    app.session_state["board_students"] = True  # the students panel opened (the board holds still)
    app.run()
    app.multiselect(key="board_chosen").set_value(["**ben**", "cy"]).run()
    app.button(key="board_remove").click().run()
    assert not app.exception
    board = Instructor(rooms, room.code, secret).board()
    assert sorted(board.removed) == ["**ben**", "cy"] and [
        e.nickname for e in board.challenges[0].entries
    ] == ["ana"]
    assert any("**1** joined · 2 removed" in m.value for m in app.markdown)
    app.multiselect(key="board_removed").set_value(["cy"]).run()
    app.button(key="board_let_in").click().run()
    assert Instructor(rooms, room.code, secret).board().removed == ["**ben**"]


def test_the_students_panel_comes_before_the_live_board():
    """Streamlit 1.67's page can drop what a full run drew after a fragment whose timer is
    running, when the timer's rerun lands just behind that run: the students panel, opened, was
    lost whole (pages/board.py). Drawn before the board's fragment, it is not."""
    rooms, room, secret = a_room()
    member = rooms.join(room.code, "ana", Visitor("10.0.1.1"))
    rooms.post(member, Result("moons-20", 0.9, 0.9, 5, 100, "/playground?seed=1"))
    app = board_page(room.code, secret)
    parts = list(app.main.children.values())

    def index(found) -> int:
        (i,) = [i for i, part in enumerate(parts) if found(part)]
        return i

    panel = index(lambda part: getattr(part, "label", None) == "Students: hide or remove several")
    board = index(lambda part: hasattr(part, "children") and any("joined" in m.value for m in part.markdown))
    assert panel < board


def test_a_student_joins_from_the_sidebar_and_bad_input_gets_a_sentence():
    rooms, room, _ = a_room()
    rooms.join(room.code, "Ana", Visitor("10.0.2.1"))
    app = open_page("pages/home.py", {"room": room.shown_code})
    assert not app.warning  # room= is a switch, not an ignored setting
    form = "FormSubmitter:room_join-Join"
    fields = {t.label: t for t in app.sidebar.text_input}
    assert fields["Room code"].value == room.shown_code
    fields["Your nickname"].set_value(" ").run()
    app.button(key=form).click().run()
    assert "nickname is empty" in app.error[0].value and "room_member" not in app.session_state
    for lookalike, words in (
        ("Аna", "different scripts"),
        ("Ana\u034f", "shows nothing"),
        ("ANA", "looks the same"),
    ):
        fields = {t.label: t for t in app.sidebar.text_input}
        fields["Your nickname"].set_value(lookalike)
        app.button(key=form).click().run()
        assert words in app.error[0].value and "room_member" not in app.session_state
        app.session_state["room_joins"] = []  # (the page's own limit: six tries a minute)
    fields = {t.label: t for t in app.sidebar.text_input}
    fields["Room code"].set_value("nope")
    fields["Your nickname"].set_value("[link](http://x)")
    app.button(key=form).click().run()
    assert "8 letters and digits" in app.error[0].value
    fields = {t.label: t for t in app.sidebar.text_input}
    fields["Room code"].set_value(room.code.lower())
    app.button(key=form).click().run()
    assert not app.exception and app.session_state["room_member"].nickname == "[link](http://x)"
    assert "[link](http://x)" in [t.value for t in app.sidebar.text]  # st.text: never Markdown
    token = app.session_state["room_member"].token
    app.button(key="room_leave").click().run()
    assert "room_member" not in app.session_state
    assert rooms.member(room.code, token) is None  # the membership ended: its token posts nothing


def test_a_join_link_to_a_page_that_rewrites_its_address_keeps_the_box_open_with_the_code():
    _, room, _ = a_room()
    app = open_page("pages/playground.py", {"room": room.shown_code, "challenge": "moons-20"})
    assert "room" not in app.query_params  # the page wrote its own link
    app.button(key="pg_step").click().run()  # any click: a rerun with the address bar as it is now
    (box,) = [e for e in app.sidebar.expander if e.label == "Class room"]
    assert box.proto.expanded
    assert {t.label: t.value for t in app.sidebar.text_input}["Room code"] == room.shown_code


def test_the_page_posts_the_checkers_best_but_not_a_run_its_link_cant_reproduce():
    def script() -> None:
        import streamlit as st

        from mlp.curriculum.challenges import CHALLENGES, Score
        from mlp.lessons import playground as pg
        from mlp.rooms import Rooms, Store
        from pages.ui.rooms import MEMBER_KEY, post_best

        challenge = CHALLENGES["moons-20"]
        settings = pg.from_query(challenge.solution.query)[0]
        if MEMBER_KEY not in st.session_state:
            rooms = Rooms(Store())
            room, secret = rooms.create("class")
            st.session_state.room = (room.code, secret)
            st.session_state[MEMBER_KEY] = rooms.join(room.code, "ana")
        scores = [Score(3, 0.9, 0.3), Score(5, 1.0, 0.01), Score(30, 1.0, 0.001)]
        st.text(post_best(challenge, settings, scores, {"seed": "0"}, lambda epoch: 0.95, own_data=False))
        st.text(
            post_best(
                challenge, settings, scores, {"seed": "0"}, lambda epoch: 0.95, altered="a weight set by hand"
            )
        )
        st.text(post_best(challenge, settings, scores, {"seed": "0"}, lambda epoch: 0.9 + epoch / 100))

    app = AppTest.from_function(script).run()
    assert not app.exception
    off, hand, on = (t.value for t in app.text)
    assert "uploaded points, or points added or erased by hand, don't go" in off
    assert "can't reproduce a weight set by hand" in hand and "Reset" in hand
    assert on.startswith("Posting your best to the class board")  # the rooms' own thread writes it
    written()
    app.run()  # the page's next check
    assert "your best so far is posted" in app.text[2].value
    code, secret = app.session_state.room
    (board,) = Instructor(Rooms(Store()), code, secret).board().challenges
    (entry,) = board.entries
    assert (entry.nickname, entry.score, entry.epoch, entry.hidden_score) == (
        "ana",
        1.0,
        5,
        pytest.approx(0.95),
    )  # epoch 30 is past 20; the hidden score is the best epoch's (5)
    assert entry.link == "/playground?seed=0" and entry.met


def test_a_weight_set_by_hand_keeps_a_playground_run_off_the_board_until_reset():
    rooms, room, _ = a_room()
    app = open_page("pages/playground.py", {"challenge": "moons-20"})
    app.session_state["room_member"] = rooms.join(room.code, "ana", Visitor("10.0.3.1"))
    app.button(key="pg_epoch").click().run()
    app.run()  # the live panel's check
    captions = lambda: " ".join(c.value for c in app.caption)  # noqa: E731
    assert "class board" in captions() and "can't reproduce" not in captions()
    app.session_state["pg_edge"] = (2, 0, 1)  # what a click on an edge sets (pages/ui/units.py)
    app.session_state["pg_weight_text"] = "4.5"
    app.run()
    app.button(key="pg_weight_apply").click().run()
    app.button(key="pg_epoch").click().run()
    assert "can't reproduce a weight set by hand" in captions()
    assert app.session_state["pg_run"].altered == "a weight set by hand"
    app.button(key="pg_reset").click().run()  # the link's weights again
    app.button(key="pg_epoch").click().run()
    assert "can't reproduce" not in captions() and app.session_state["pg_run"].altered is None


def test_a_result_the_database_cant_take_is_kept_pending_and_the_page_says_so(monkeypatch):
    def script() -> None:
        import streamlit as st

        from mlp.curriculum.challenges import CHALLENGES, Score
        from mlp.lessons import playground as pg
        from pages.ui.rooms import MEMBER_KEY, post_best, shared_rooms

        challenge = CHALLENGES["moons-20"]
        settings = pg.from_query(challenge.solution.query)[0]
        if MEMBER_KEY not in st.session_state:
            room, secret = shared_rooms().create("class")
            st.session_state.room = (room.code, secret)
            st.session_state[MEMBER_KEY] = shared_rooms().join(room.code, "ana")
        best = st.session_state.get("best", 0.9)
        st.text(post_best(challenge, settings, [Score(5, best, 0.01)], {"seed": "0"}, lambda epoch: 0.95))

    app = AppTest.from_function(script)
    assert "your best so far is posted" in checked(app)
    rooms = shared_rooms()
    real, outage = rooms.store.transaction, [True]

    def failing(write: bool = True):  # SQLite's write lock held elsewhere, longer than its timeout
        if outage[0] and write:
            raise StoreError("The rooms' database failed: {}", "database is locked", transient=True)
        return real(write)

    monkeypatch.setattr(rooms.store, "transaction", failing)
    monkeypatch.setattr(rooms.posts.outbox, "_last", {})  # ana's last write long ago: this one goes at once
    app.session_state["best"] = 1.0
    app.run()  # handed to the rooms' thread, which meets the locked database
    deadline = time.monotonic() + 30
    while not any(w.tries for w in rooms.posts.outbox._waiting.values()):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    app.run()
    assert "Waiting for the class board" in app.text[0].value and not app.exception
    app.run()  # the next check: still waiting, the result kept
    assert "Waiting for the class board" in app.text[0].value
    outage[0] = False
    written()  # the outbox's timer retries it, later each time
    app.run()
    assert "your best so far is posted" in app.text[0].value
    code, secret = app.session_state.room
    assert Instructor(rooms, code, secret).board().challenges[0].entries[0].score == 1.0


def test_a_closed_challenge_says_so_at_every_check_and_a_new_membership_posts_afresh():
    def script() -> None:
        import time

        import streamlit as st

        from mlp.curriculum.challenges import CHALLENGES, Score
        from mlp.lessons import playground as pg
        from pages.ui.rooms import post_best, shared_rooms

        # Each check a few seconds after the one before, as a page's are (a post a second at most)
        st.session_state.checks = checks = st.session_state.get("checks", 0) + 1
        shared_rooms().clock = lambda: time.time() + 3 * checks
        shared_rooms().posts.clock = shared_rooms().clock
        challenge = CHALLENGES["moons-20"]
        settings = pg.from_query(challenge.solution.query)[0]
        best = st.session_state.get("best", 0.9)
        st.text(post_best(challenge, settings, [Score(5, best, 0.1)], {"seed": "0"}, lambda epoch: 0.9))

    def on_time() -> None:  # the page's rooms back on the wall clock, for the tests after this one
        import time

        from pages.ui.rooms import shared_rooms

        shared_rooms().clock = shared_rooms().posts.clock = time.time

    try:
        closed_then_joined_again(AppTest.from_function(script))
    finally:
        AppTest.from_function(on_time).run()


def closed_then_joined_again(app: AppTest) -> None:
    rooms = Rooms(Store())
    room, secret = rooms.create("class")
    app.session_state["room_member"] = rooms.join(room.code, "ana")
    assert "your best so far is posted" in checked(app)
    Instructor(rooms, room.code, secret).close_challenge("moons-20")
    app.session_state["best"] = 0.95  # better: posted, refused, the challenge is closed
    assert checked(app).startswith("The instructor closed this challenge")
    app.run()  # and the next check says the same, not "posted"
    assert app.text[0].value.startswith("The instructor closed this challenge")
    again, again_secret = rooms.create("the same class, after a break")
    app.session_state["room_member"] = rooms.join(again.code, "ana")
    app.session_state["best"] = 0.9
    checked(app)
    ana = rooms.join(again.code, "ana 2")  # left, and joined the same room again under another nickname
    app.session_state["room_member"] = ana
    app.session_state["best"] = 0.85  # worse than ana's: still the new membership's first result
    assert "your best so far is posted" in checked(app)
    (board,) = Instructor(rooms, again.code, again_secret).board().challenges
    assert sorted((e.nickname, e.score) for e in board.entries) == [("ana", 0.9), ("ana 2", 0.85)]


def checked(app: AppTest) -> str:
    """What the page says of the board after a check, the rooms' thread's write, and the next check."""
    app.run()
    written()
    app.run()
    return app.text[0].value


@pytest.mark.slow
def test_the_mnist_page_checks_a_challenge_on_its_visible_digits_and_posts_the_hidden_ones_score():
    rooms = Rooms(Store())
    room, secret = rooms.create("class")
    app = open_page("pages/mnist.py", {"challenge": "mnist-3"})
    assert any("700 test digits (300 more kept hidden for the challenge)" in i.value for i in app.info)
    app.session_state["room_member"] = rooms.join(room.code, "ana")
    app.run()  # in the room: the page's digits are the room's part
    train(app, epochs=1)
    assert not app.exception
    run = app.session_state["mn_session"].run
    assert run.data.hidden is not None and len(run.evaluate().predicted) == 700  # the page shows these
    assert (
        run.data.part_seed == rooms.room_seed(room.code, "mnist-3") != HIDDEN_SEED
    )  # the room's secret chose them
    written()
    app.run()
    (board,) = Instructor(rooms, room.code, secret).board().challenges
    (entry,) = board.entries
    assert (entry.nickname, entry.epoch, entry.score) == ("ana", 1, pytest.approx(run.evaluate().accuracy))
    assert entry.hidden_score == pytest.approx(run.hidden_accuracy()) and 0.5 < entry.hidden_score < 1
    assert entry.link.startswith("/mnist?") and "challenge=mnist-3" in entry.link
    assert any("your best so far is posted" in c.value for c in [*app.caption, *app.markdown])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_hidden_score_posted_is_the_best_epochs_not_the_networks_now(seed):
    challenge = CHALLENGES[CHALLENGE]  # within 20 epochs: the run trains on past them
    settings = replace(pg.from_query(challenge.solution.query)[0], seed=seed)
    run = Playground(settings, pg.make_points(settings))
    X, y = hidden_points(settings)
    run.watch_hidden(X, y)
    then = {}  # each epoch's (loss, accuracy) on the hidden points, from the network at its end
    for _ in range(40):
        run.run_epoch()
        then[run.trainer.epoch] = run.view.score(X, y)
    best = challenge.best(playground_scores(run.trainer.history))
    assert best.epoch <= 20 and best.epoch in run.trainer.watch.scored  # scored when it happened
    loss, accuracy = then[best.epoch]
    assert run.trainer.watch.scored[best.epoch] == pytest.approx((loss, accuracy), abs=1e-5)
    assert hidden_score(run, challenge, best.epoch) == pytest.approx(accuracy, abs=1e-5)
    as_loss = replace(challenge, metric="test_loss")  # the same, read as a loss challenge would
    assert hidden_score(run, as_loss, best.epoch) == pytest.approx(loss, abs=1e-6)
    assert then[40][0] != pytest.approx(loss, abs=1e-6)  # the network now scores otherwise
    improved = [e.epoch for i, e in enumerate(run.trainer.history.epochs) if _improves(run, i)]
    assert sorted(run.trainer.watch.scored) == improved  # and only the epochs that could be a best
    run.reset()
    assert run.trainer.watch.points is not None and run.trainer.watch.scored == {}  # a reset goes on watching


def _improves(run: Playground, i: int) -> bool:
    epochs = run.trainer.history.epochs
    before = epochs[:i]
    return (
        not before
        or epochs[i].val_loss < min(e.val_loss for e in before)
        or epochs[i].val_acc > max(e.val_acc for e in before)
    )


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_hidden_part_is_new_points_scored_as_the_visible_ones_are(seed):
    challenge = CHALLENGES[CHALLENGE]
    settings = replace(pg.from_query(challenge.solution.query)[0], seed=seed)
    run = Playground(settings, pg.make_points(settings))
    for _ in range(10):
        run.run_epoch()
    last = run.trainer.history.epochs[-1]
    loss, accuracy = run.view.score(run.points.X_test, run.points.y_test)
    assert accuracy == pytest.approx(last.val_acc) and loss == pytest.approx(last.val_loss, rel=1e-5)
    X, y = hidden_points(settings)
    assert len(X) == len(run.points.X_test) and set(np.unique(y)) == set(np.unique(run.points.y_test))
    assert (
        not np.isin(X, run.points.X_test).all(axis=1).any()
        and not np.isin(X, run.points.X_train).all(axis=1).any()
    )
    hidden_loss, hidden_accuracy = run.view.score(X, y)
    assert hidden_accuracy > 0.9 and hidden_loss < 0.5  # the same moons: a network that learnt them does well


# --- a class in Chromium ------------------------------------------------------------------------

STUDENTS = {"ana": 0, "**ben**": 3}  # nickname -> the seed they train with (markup shown as typed)
CHALLENGE = "moons-20"


def challenge_link(seed: int) -> str:
    query = dict(CHALLENGES[CHALLENGE].solution.query) | {"seed": str(seed), "challenge": CHALLENGE}
    return f"/playground?{urlencode(query)}"


def no_traceback(*tabs) -> None:
    for tab in tabs:
        assert tab.locator('[data-testid="stException"]').count() == 0


def run_a_class(
    browser, url: str, name: str, cookies: dict[str, str] | None = None
) -> tuple[list[dict], str]:
    """An instructor starts a room; the students join from its link, reload onto a challenge's
    link (a new session: the browser brings their membership back) and play until it is met;
    the board shows them, hides one, closes the challenge and exports. `cookies`: who (the
    instructor or a nickname) goes to which replica. The CSV's rows, and the instructor's link."""
    cookies = cookies or {}
    tabs = {}

    def context(who: str, dark: bool = False):
        ctx = browser.new_context(
            viewport={"width": 1280, "height": 720}, color_scheme="dark" if dark else "light"
        )
        if who in cookies:
            ctx.add_cookies([{"name": "mlp_replica", "value": cookies[who], "url": url}])
        tab = tabs[who] = ctx.new_page()
        tab.set_default_timeout(120_000)
        return tab

    try:
        return _class(url, name, context)
    except BaseException:
        for who, tab in tabs.items():  # what each of them saw, for the failure's reader
            with contextlib.suppress(Exception):
                tab.screenshot(path=str(ARTIFACTS / f"FAILED-board-{name}-{who.strip('*')}.png"))
        raise
    finally:
        for tab in tabs.values():
            with contextlib.suppress(Exception):
                tab.context.close()


def _class(url: str, name: str, context: Callable) -> tuple[list[dict], str]:

    teacher = context("instructor", dark=True)
    teacher.goto(f"{url}/board")
    wait_for_app(teacher, heading="Class board")
    teacher.get_by_role("textbox", name="Room name").fill("Friday <b>ML</b>")
    button(teacher, "Start a room").click()
    expect(teacher.locator(".board-title")).to_have_text("Friday <b>ML</b>")  # as typed
    code = teacher.locator(".board-code").inner_text()
    teacher.get_by_text("Your instructor link: keep it to yourself").click()
    link = teacher.get_by_test_id("stExpander").get_by_test_id("stCode").inner_text().strip()
    assert link.startswith(f"{url}/board?room={code.replace('-', '')}#key=")  # the secret: never sent
    projector = context("projector")  # the instructor's link, opened on the room's machine
    projector.goto(link)
    wait_for_app(projector, heading="Class board")
    expect(projector.locator(".board-code")).to_have_text(code)
    projector.wait_for_function("() => !location.hash")  # off the address bar
    students = {}
    for nickname, seed in STUDENTS.items():
        tab = students[nickname] = context(nickname)
        tab.goto(f"{url}/?room={code}")
        wait_for_app(tab, heading="MLP Playground")
        tab.get_by_role("textbox", name="Your nickname").fill(nickname)
        button(tab, "Join").click()
        expect(tab.locator(".st-key-room_member_box")).to_contain_text(nickname)
        kept = wait_for_cookie(tab, "mlp_room")  # set by the server's route, not by the page
        assert kept["httpOnly"] and kept["sameSite"] == "Lax" and not kept["secure"]  # (plain HTTP here)
        assert "mlp_room" not in tab.evaluate("document.cookie")  # no script on the page reads it
        tab.goto(url + challenge_link(seed))  # a full reload: a new session
        wait_for_app(tab, heading="2D playground")
        expect(tab.locator(".st-key-room_member_box")).to_contain_text(code)  # back in the room
        expect(tab.locator(".st-key-room_member_box")).to_contain_text("Not you?")  # a shared computer
        wait_for_app(tab, heading="2D playground")  # the run that brought it back has ended
        button(tab, "Play").click()
        expect(button(tab, "Pause")).to_be_visible()
    for tab in students.values():
        expect(tab.get_by_text("your best so far is posted")).to_be_visible(timeout=180_000)
    expect(teacher.get_by_text(f"{len(STUDENTS)} in · {len(STUDENTS)} met the goal")).to_be_visible()
    teacher.wait_for_timeout(500)  # the chart's first draw
    teacher.screenshot(path=str(ARTIFACTS / f"board-{name}-dark-1280x720.png"))  # the projector's screen
    teacher.get_by_role("button", name="Hide **ben**").click()  # the row's own button
    expect(teacher.get_by_text("1 hidden")).to_be_visible()
    button(teacher, "Close and rank on hidden points").click()
    expect(teacher.get_by_text("Closed: ranked again on the hidden test points")).to_be_visible()
    expect(teacher.locator(".st-key-board_ranks_moons-20 tbody")).to_contain_text("✓ reproduced")  # re-run
    with teacher.expect_download() as download:
        button(teacher, "Download CSV").click()
    rows = list(csv.DictReader(io.StringIO(Path(download.value.path()).read_text())))
    ana = students["ana"]
    ana.get_by_role("button", name="Leave the room").click()
    expect(ana.locator(".st-key-room_member_box")).to_have_count(0)
    wait_for_cookie(ana, "mlp_room", gone=True)  # the browser forgets the room
    ana.reload()
    wait_for_app(ana, heading="2D playground")
    expect(ana.get_by_test_id("stSidebar").get_by_text("Class room", exact=True)).to_be_visible()  # to join
    expect(ana.locator(".st-key-room_member_box")).to_have_count(0)
    setup = context("viewer")
    setup.goto(url + rows[0]["setup link"])  # the instructor opens a student's setup
    wait_for_app(setup, heading="2D playground")
    expect(setup.get_by_text(CHALLENGES[CHALLENGE].goal).first).to_be_visible()
    no_traceback(teacher, projector, *students.values(), setup)
    return rows, link


def wait_for_cookie(tab, name: str, gone: bool = False, seconds: float = 60) -> dict | None:
    """The tab's cookie `name` once the browser has it (or, `gone`, once it hasn't)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = next((c for c in tab.context.cookies() if c["name"] == name and c["value"]), None)
        if (found is None) == gone:
            return found
        tab.wait_for_timeout(100)
    raise AssertionError(f"cookie {name} {'still set' if gone else 'never set'}")


def check_export(rows: list[dict]) -> None:
    assert sorted(r["nickname"] for r in rows) == sorted(STUDENTS)
    for row in rows:
        assert row["challenge"] == CHALLENGE and row["met"] == "yes" and float(row["score"]) >= 0.99
        assert 0 <= float(row["hidden part score"]) <= 1  # measured on points no page showed
        assert row["setup link"].startswith("/playground?") and f"challenge={CHALLENGE}" in row["setup link"]
        assert int(row["epoch"]) <= CHALLENGES[CHALLENGE].within
    assert {r["nickname"]: r["hidden from the board"] for r in rows} == {"ana": "no", "**ben**": "yes"}
    assert {r["nickname"]: r["re-run at close"] for r in rows} == {"ana": "reproduced", "**ben**": ""}


@pytest.mark.browser
@pytest.mark.slow
def test_a_class_across_two_replicas_behind_nginx_on_postgresql(browser, postgres_url, tmp_path):
    """The instructor on one replica, ana on the other, ben on the first: the board, served by
    r1, shows what r2 posted, and the CSV has everyone's. (The class through the browser runs
    here only: on one server and SQLite it was the same path again, 40 s of CI's; a room on one
    server is tests/test_hostile_class.py's in Chromium, on SQLite tests/test_room_load.py's and
    tests/test_board_flood.py's, and the store's own tests on both databases tests/test_rooms.py's.)"""
    _require_browser()
    if nginx_path() is None:
        pytest.fail("nginx not found (apt-get install nginx)")
    logs = ARTIFACTS / "board-replicas"
    shutil.rmtree(logs, ignore_errors=True)
    logs.mkdir(parents=True)
    database = new_database(postgres_url, "board")
    ports = [free_port(), free_port()]
    replicas = Replicas(ports, replica_env() | {"MLP_DATABASE_URL": database}, logs)
    url = f"http://127.0.0.1:{free_port()}"
    nginx = []
    try:
        for port in ports:
            replicas.start(port)
        assert replicas.wait_up() is None
        site = site_config([f"127.0.0.1:{p}" for p in ports], url.removeprefix("http://"), True)
        nginx.append(start_nginx(logs / "nginx", site))
        deadline = time.monotonic() + 30
        while not healthy(url):
            assert nginx[0].poll() is None and time.monotonic() < deadline, f"nginx did not start: see {logs}"
            time.sleep(0.1)
        rows, link = run_a_class(
            browser, url, "replicas", {"instructor": "r1", "ana": "r2", "**ben**": "r1", "viewer": "r2"}
        )
        check_export(rows)
        with Rooms(Store(database)).store.transaction() as db:  # in PostgreSQL: no replica holds them
            assert db.one("SELECT COUNT(*) FROM results")[0] == len(STUDENTS)
        answered = (logs / "nginx" / "access.log").read_text()
        for port in ports:  # both replicas served the class
            assert f"replica=127.0.0.1:{port}" in answered
        assert '"GET /board HTTP/1.1"' in answered  # the board's requests, by path alone:
        assert "?" not in answered and link.split("#key=")[1] not in answered  # no query, no secret
    finally:
        stop([*nginx, *replicas.processes()])


@pytest.mark.browser
@pytest.mark.slow
def test_the_boards_browser_redraws_only_what_changed(browser, tmp_path):
    """The board redraws twice a second; its browser keeps each table row's node and replaces
    only the cells whose text changed (pages/ui/live_html.py), a nickname stays text, and a row's
    button neither fires twice on a double click nor for a row that just moved under it."""
    rooms = Rooms(Store(f"sqlite:///{tmp_path}/rooms.sqlite3"))
    room, secret = rooms.create("class")
    ana, ben, cy = (rooms.join(room.code, n) for n in ("<b>ana</b>", "ben", "cy"))

    def post(member, key: str, score: float) -> None:
        rooms.post(member, Result(key, score, score, 5, 100, f"/playground?challenge={key}"))

    post(ana, "moons-20", 0.99)
    post(ben, "moons-20", 0.90)
    table = ".st-key-board_ranks_moons-20 tbody"
    # Each row's node and its score cell, marked with the row's place when marked: what a redraw
    # keeps shows the mark, what it replaced shows none.
    rows_js = f"[...document.querySelectorAll('{table} tr')]"
    mark = f"() => {rows_js}.forEach((row, i) => {{ row.kept = row.cells[2].kept = i; }})"
    kept = f"() => {rows_js}.map((row) => [row.kept ?? null, row.cells[2].kept ?? null])"
    drawn = f"() => {rows_js}.map((row) => row.outerHTML)"
    with serve_app("board-in-place.log", env={"MLP_PLAYGROUND_STATE": str(tmp_path)}) as url:
        tab = open_tab(browser, f"{url}/board?room={room.code}#key={secret}", "Class board", 60_000)
        rows = tab.locator(f"{table} tr")
        expect(rows).to_have_count(2)
        expect(rows.nth(0).locator("td").nth(1)).to_have_text("<b>ana</b>")  # as typed, not bold
        expect(rows.nth(0).locator("b")).to_have_count(0)
        tab.evaluate(mark)
        # News on another challenge: the board redraws, this table holds. (spiral-100 comes after
        # moons-20 on the board: a challenge's first result above a table moves it down, and
        # Streamlit draws the moved elements anew, once.)
        post(cy, "spiral-100", 0.9)
        expect(tab.get_by_text("1 in · 0 met the goal")).to_be_visible()
        expect(tab.locator(".st-key-board_ranks_spiral-100 tbody tr")).to_have_count(1)
        assert tab.evaluate(kept) == [[0, 0], [1, 1]]  # both rows, every cell as drawn before
        post(ben, "moons-20", 0.95)  # ben's score changes; ana stays first
        expect(rows.nth(1)).to_contain_text("95.0%")
        assert tab.evaluate(kept) == [[0, 0], [1, None]]  # ben's row kept, its new score drawn
        post(ben, "moons-20", 1.0)  # ben overtakes ana: the rows swap, each keeping its node
        expect(rows.nth(0)).to_contain_text("ben")
        assert tab.evaluate(kept) == [[1, None], [0, 0]]
        assert all(row.count("<td") == 9 for row in tab.evaluate(drawn))  # every cell, once

        # The click guard, with the page's trigger held (so nothing reaches the server): a row
        # that moved under the pointer a moment ago, a double click, then a click that counts.
        guard = f"""() => {{
          const box = document.querySelector("{table}").closest(".live-html"), sent = [];
          const real = box.__clicked;
          const hide = (i) => box.querySelectorAll("tbody tr")[i].querySelector("button");
          box.__clicked = (name, value) => sent.push(value);
          box.__sent = undefined;
          hide(0).closest("tr").__moved = performance.now();
          hide(0).click();  // ben's row has just moved: not for ben
          hide(1).closest("tr").__moved = undefined;
          hide(1).click(); hide(1).click();  // a double click: one
          box.__clicked = real; box.__sent = undefined;
          return sent;
        }}"""
        assert tab.evaluate(guard) == ["<b>ana</b>"]
        ben_row = f"document.querySelectorAll('{table} tr')[0]"
        tab.wait_for_function(f"() => performance.now() - ({ben_row}.__moved ?? 0) > 700")  # settled
        tab.get_by_role("button", name="Hide ben").click()  # off the board, from its row
        expect(rows).to_have_count(1)
        expect(tab.get_by_text("3 joined · 1 hidden")).to_be_visible()
        expect(tab.get_by_text("off the board. Hidden from the board")).to_be_visible()  # a toast says where
        hidden = tab.get_by_test_id("stExpander").get_by_text("Hidden from the board", exact=True)
        hidden.click()
        tab.get_by_role("button", name="Show again ben").click()
        expect(rows).to_have_count(2)
        expect(hidden).to_have_count(0)
        tab.locator(".st-key-board_moons-20").get_by_role(
            "button", name="Close and rank on hidden points"
        ).click()
        expect(tab.locator(".st-key-board_ranks_moons-20 th", has_text="Hidden points")).to_have_count(1)
        expect(rows).to_have_count(2)  # a new frame, every row drawn in it
        tab.context.close()
