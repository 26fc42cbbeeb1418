"""The shell every page runs in: app.py's navigation, a warm process, the debug switch."""

import time
from collections import deque
from collections.abc import Callable, Collection, Mapping
from dataclasses import fields, replace
from typing import Any

import streamlit as st

from mlp.curriculum.catalogue import COMPARE, LESSON
from mlp.curriculum.challenges import CHALLENGE
from mlp.curriculum.tour import STOP, TOUR
from mlp.figures.style import for_presenter
from mlp.spec import Spec
from pages.ui.internals import BASE_CSS, PRESENTER_CSS, leave_pages_directory_mode
from pages.ui.reconnect import reconnect_notice
from pages.ui.rooms import ROOM
from pages.ui.text import literal


@st.cache_resource(show_spinner="Starting up…")
def warm_up() -> int:
    """Once per server process: import what every page uses, then freeze the heap that built.

    Streamlit runs a full garbage collection after every script run. With torch, plotly and
    pandas loaded that pass walks about 250,000 objects (120-210 ms here), after every frame of
    every playing visitor. gc.freeze() takes the import-time objects out of the collector's
    view: the pass then costs about a millisecond and still frees what a rerun leaves behind.
    Returns how many objects it froze.
    """
    import gc
    import importlib
    import pkgutil

    import mlp

    for module in ("plotly.graph_objects", "pandas", "torch"):
        importlib.import_module(module)
    for info in pkgutil.walk_packages(mlp.__path__, "mlp."):
        importlib.import_module(info.name)
    gc.collect()
    gc.freeze()
    gc.callbacks.append(_time_collection)
    return gc.get_freeze_count()


_COLLECTIONS: deque[float] = deque(maxlen=200)  # seconds each of the last full collections
_started: list[float] = []


def _time_collection(phase: str, info: dict) -> None:
    if info["generation"] != 2:
        return
    if phase == "start":
        _started[:] = [time.perf_counter()]
    elif _started:
        _COLLECTIONS.append(time.perf_counter() - _started[0])


def collection_text() -> str:
    """'full collections: 12 in view, median 1.8 ms, longest 4.0 ms', for the debug captions."""
    if not _COLLECTIONS:
        return "no full collection yet"
    ms = sorted(1000 * s for s in _COLLECTIONS)
    return f"full collections: {len(ms)} lately, median {ms[len(ms) // 2]:.1f} ms, longest {ms[-1]:.1f} ms"


def require_shell() -> None:
    """Run this page inside app.py's navigation, even when it is the first URL a server sees.

    A folder named pages/ makes Streamlit start in its old directory mode: until some run
    calls st.navigation, a direct link to a page runs that file alone, without app.py's page
    config and sidebar. Leaving that mode and rerunning sends the request through app.py,
    on the same page, with the same query string and the same widget values from the browser.

    Only the run that stays looks for a lost session: the browser drops what a run in that
    mode drew, a toast too, so a visitor who lands on a replica that has served no page yet
    would not be told.
    """
    leave_pages_directory_mode()  # pages/ui/internals.py, 1
    reconnect_notice()  # before the page draws a widget: the browser brought their values


DEBUG = "debug"  # ?debug=1 in any page's link: timing captions for developers
PRESENT = "present"  # ?present=1: presenter mode, for a projector
SHOW = "show"  # ?show=lr,bs: the only settings a link's visitors see in a page's sidebar
PRESENTER_KEY = "app_projector"  # the sidebar's toggle


def debug_mode() -> bool:
    """Whether the link asks for the developers' captions (frames per second, build times)."""
    return st.query_params.get(DEBUG) == "1"


def presenter() -> bool:
    """Whether the visitor presents: larger text, each page's main visual first and whole."""
    return bool(st.session_state.get(PRESENTER_KEY))


PACED_PAGES: dict[str, Mapping[str, Spec]] = {}  # each page's settings prefix -> its specs (page_settings)


def for_class(settings: Any, specs: Mapping[str, Spec], given: Collection[str] = ()) -> Any:
    """`settings` at a class's pace: each setting that declares one (`Spec.for_class`) and that
    is still at its default, unless the link sets it (`given`: the link's parameter names)."""
    defaults = {f.name: f.default for f in fields(settings)}
    paced = {
        name: spec.for_class
        for name, spec in specs.items()
        if spec.for_class is not None and spec.key not in given and getattr(settings, name) == defaults[name]
    }
    return replace(settings, **paced)


def _switch_pace() -> None:
    """Projector mode on: the pages' paces at a class's, where the visitor left them at the
    default; off: back to the default where they are still at a class's."""
    on = st.session_state[PRESENTER_KEY]
    for prefix, specs in PACED_PAGES.items():
        saved = st.session_state.get(prefix + "settings")
        if saved is None:
            continue
        defaults = {f.name: f.default for f in fields(saved)}
        for name, spec in specs.items():
            if spec.for_class is None:
                continue
            was, now = (defaults[name], spec.for_class) if on else (spec.for_class, defaults[name])
            if getattr(saved, name) == was and st.session_state.get(prefix + name, was) == was:
                saved = replace(saved, **{name: now})
                if prefix + name in st.session_state:
                    st.session_state[prefix + name] = now
        st.session_state[prefix + "settings"] = saved


def presenting() -> bool:
    """Whether this run presents, before the sidebar's switch is drawn: its value, or the link's."""
    return bool(st.session_state.get(PRESENTER_KEY, st.query_params.get(PRESENT) == "1"))


def presenter_toggle() -> bool:
    """The sidebar's presenter switch, on at first when the link says so; styles the page."""
    st.session_state.setdefault(PRESENTER_KEY, st.query_params.get(PRESENT) == "1")
    on = st.toggle(
        "Projector mode",
        key=PRESENTER_KEY,
        on_change=_switch_pace,
        help="Larger text and charts, each page's main picture first, a class's pace: for "
        "presenting to a room.",
    )
    st.html(PRESENTER_CSS if on else BASE_CSS)
    return on


def switches_query() -> dict[str, str]:
    """What a page adds to the address bar to keep the page-wide switches (debug, presenter) on."""
    return ({DEBUG: "1"} if debug_mode() else {}) | ({PRESENT: "1"} if presenter() else {})


LOAD = "load"  # ?load=1: a lesson's button on another page sent the visitor (pages/ui/lessons.py)
SWITCHES = (DEBUG, PRESENT, SHOW, LESSON, CHALLENGE, COMPARE, LOAD, TOUR, STOP, ROOM)  # not settings


def settings_query(query: Mapping[str, str]) -> dict[str, str]:
    """A link's settings parameters: the page-wide switches, lessons and challenges left out."""
    return {k: v for k, v in query.items() if k not in SWITCHES}


def link_query() -> dict[str, str]:
    """The address bar's settings parameters."""
    return settings_query(st.query_params.to_dict())


CHART_CONFIG = {"displayModeBar": False}


def chart(fig, box=None, **kwargs) -> None:
    """st.plotly_chart (or `box.plotly_chart`, e.g. into an st.empty) without plotly's toolbar;
    in presenter mode every text ≥ 18 px."""
    (box or st).plotly_chart(for_presenter(fig) if presenter() else fig, config=CHART_CONFIG, **kwargs)


def page_header(title: str, caption: str) -> None:
    """A page's title and what it is about; in presenter mode the title alone, compact; in a
    tour (whose card says what the stop is about) the title alone, and in presenter mode nothing."""
    touring = st.query_params.get(TOUR) is not None
    if not (touring and presenter()):
        st.title(title)
    if not (presenter() or touring):
        st.caption(caption)


CLICK_SECONDS = 0.1  # how soon a click is heard while a page's loop waits on a run


def wait_heeding_clicks(wait: Callable[[float], bool], seconds: float, key: str) -> bool:
    """Up to `seconds` of `wait(timeout)` (True: what it waits for happened), while still
    hearing the visitor's clicks.

    A click asks Streamlit to rerun, and Streamlit acts on that request (ending this script
    run) when the script next draws or touches st.session_state. A page's loop that draws
    only now and then reads `key` every CLICK_SECONDS: a click is heard within that, at no
    cost to the browser.
    """
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        if wait(min(CLICK_SECONDS, left)):
            return True
        _ = key in st.session_state  # where Streamlit ends this run if a click is waiting
    return False


def training_status(page: str) -> None:
    """A line in the sidebar about this visitor's MNIST run while it trains, on the other pages
    (the MNIST page shows the run itself). `page` is the current page's url path."""
    session = st.session_state.get("mn_session")
    if session is None or not session.running or page == "mnist":
        return

    @st.fragment(run_every=1.0)
    def status() -> None:
        if session.running:  # once it ends: nothing, until the next full run turns this timer off
            st.caption(literal(session.sidebar_status(), 80))

    status()
