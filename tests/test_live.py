"""pages/serving/live.py: a slow panel's browser timer follows the number of visitors playing."""

import importlib
from types import SimpleNamespace

import pytest
from streamlit.runtime.scriptrunner_utils.script_run_context import ScriptRunContext
from streamlit.testing.v1 import AppTest

from pages.serving.turns import Turns

live = importlib.import_module("pages.serving.live")  # the module (its function is named live too)


@pytest.fixture(autouse=True)
def own_line(monkeypatch) -> None:
    """A line of its own: players counted by the process's line (other tests' turns in the last
    few seconds) would stretch the intervals these tests expect."""
    turns = Turns()
    monkeypatch.setattr(live, "shared_turns", lambda: turns)


def panel_script() -> None:
    import streamlit as st

    from pages.serving.live import retime

    @st.fragment(run_every=1.0)
    def panel() -> None:
        retime(st.session_state.get("want", 1.0))
        st.write("panel")

    panel()


@pytest.fixture
def sent(monkeypatch) -> list:
    """Every auto-rerun message a script run sends to the browser: (fragment id, interval)."""
    timers = []
    enqueue = ScriptRunContext.enqueue

    def record(self, msg) -> None:
        if msg.WhichOneof("type") == "auto_rerun":
            timers.append((msg.auto_rerun.fragment_id, msg.auto_rerun.interval))
        enqueue(self, msg)

    monkeypatch.setattr(ScriptRunContext, "enqueue", record)
    return timers


def test_a_fragment_tells_the_browser_its_new_interval(sent):
    """Against the installed Streamlit: the message names the fragment Streamlit registered and
    comes after Streamlit's own, so the browser's timer ends up at the new interval."""
    app = AppTest.from_function(panel_script)
    app.session_state["want"] = 7.0
    app.run()
    assert not app.exception
    assert [interval for _, interval in sent] == [1.0, 7.0]
    assert sent[0][0] == sent[1][0] != ""


def test_every_full_run_sends_its_interval_even_when_close_to_the_last(sent):
    """A full run resets the browser's timers and Streamlit sets this one to run_every (1 s):
    the panel must say its own interval again, however close to the one it recorded."""
    app = AppTest.from_function(panel_script)
    app.session_state["want"] = 7.0
    app.run()
    app.session_state["want"] = 7.5
    app.run()
    assert [interval for _, interval in sent] == [1.0, 7.0, 1.0, 7.5]


def live_panel_script() -> None:
    import streamlit as st

    from pages.serving.live import live

    @live(1.0, st.session_state.get("playing", True), slow=st.session_state.get("slow", True))
    def panel() -> None:
        st.write("panel")

    panel()


@pytest.mark.parametrize(
    ("playing", "slow", "intervals"),
    [
        (True, True, [1.0, 1.0]),  # run_every, then retime's (nobody else playing: 1 s)
        (True, False, [1.0]),  # a fast panel keeps run_every
        (False, True, []),  # paused: no timer at all, so the browser's stops
    ],
)
def test_live_panels_send_timers_only_while_playing(sent, playing, slow, intervals):
    app = AppTest.from_function(live_panel_script)
    app.session_state["playing"], app.session_state["slow"] = playing, slow
    app.run()
    assert not app.exception
    assert [interval for _, interval in sent] == intervals


@pytest.fixture
def fragment_rerun(monkeypatch, sent) -> SimpleNamespace:
    """retime() as if inside a rerun of fragment "f" (Streamlit can't rerun a fragment in AppTest)."""
    state = SimpleNamespace(session_state={})
    monkeypatch.setattr(live, "st", state)
    monkeypatch.setattr(live, "fragment_run", lambda: ("f", True))
    monkeypatch.setattr(
        live, "set_fragment_timer", lambda fragment_id, seconds: sent.append((fragment_id, seconds))
    )
    return state


def test_a_rerun_resets_the_timer_only_when_the_interval_changes_enough(fragment_rerun, sent):
    live.retime(2.0)  # first heard of: sent
    live.retime(2.5)  # within RETIME_RATIO of 2.0: the browser's timer keeps running
    live.retime(1.5)
    live.retime(3.0)  # exactly 1.5x: still within
    live.retime(16.0)  # 8 visitors now play: sent
    live.retime(14.0)
    live.retime(2.0)  # they left: sent
    assert sent == [("f", 2.0), ("f", 16.0), ("f", 2.0)]
    assert fragment_rerun.session_state[live.TIMERS] == {"f": 2.0}


def test_outside_a_fragment_nothing_is_sent(monkeypatch, sent):
    from pages.ui import internals

    monkeypatch.setattr(internals.ThreadState, "get", lambda: SimpleNamespace(fragment_id=None))
    monkeypatch.setattr(internals, "get_script_run_ctx", lambda: SimpleNamespace(fragment_ids_this_run=None))
    live.retime(3.0)
    assert sent == []
