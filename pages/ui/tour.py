"""A guided tour on the page: the stop's card, → and ← to move on and back, the part it points at.

A tour (mlp.curriculum.tour) is given by link: ?tour=<key>&stop=<n> on any page opens that
stop on its own page, with its setup loaded once, so a class resumes where it was left.
Moving is a page switch with the next stop's link, the same path a shared link takes.
"""

from collections.abc import Callable, Mapping

import streamlit as st

from mlp.curriculum.catalogue import LESSONS
from mlp.curriculum.tour import ACTIONS, STOP, TOUR, TOURS, Stop, Tour
from mlp.links.settings import LinkNote
from pages.ui.shell import LOAD, link_query, switches_query
from pages.ui.text import show_link_notes

Load = Callable[[Mapping[str, str]], None]
# Moves the page's own walk one step (+1 or -1) within a stop's (first, last) steps; False at
# either end. Forward & backward hands one in: there → steps through the operations first.
Walk = Callable[[int, tuple[str, str]], bool]
HIGHLIGHT = "#CC79A7"  # Okabe-Ito reddish purple: apart from the classes' orange and blue, both themes
GOING = "tour_going"  # session key: the stop Back or Next asked for, for the run that follows


def current_tour() -> tuple[Tour, int] | None:
    """The tour and stop number the link names, or None (a stop out of range: the first)."""
    tour = TOURS.get(st.query_params.get(TOUR, ""))
    if tour is None:
        return None
    return tour, tour.stop_from(st.query_params.get(STOP)) or 1


def tour_card(prefix: str, page: str, load: Load, walk: Walk | None = None) -> dict[str, str] | None:
    """On a page the link's tour has a stop on: its card (where the class is, what to say,
    what to do), its setup loaded on arrival, its highlight; the link's part. None outside a tour."""
    if (named := st.query_params.get(TOUR)) is not None and named not in TOURS:
        show_link_notes([LinkNote(TOUR, named, "there is no tour of that name")])
    if (found := current_tour()) is None:
        return None
    tour, number = found
    if (going := st.session_state.pop(GOING, None)) is not None:  # Back or Next was pressed
        if going > len(tour.stops):
            _leave()
        _go(tour, max(going, 1))
    stop = tour.stops[number - 1]
    if stop.page != page:  # a link to a stop on another page, e.g. typed by hand
        _go(tour, number)
    arrived = f"{prefix}tour_stop"
    if st.session_state.get(arrived) != (tour.key, number) or st.query_params.get(LOAD) == "1":
        st.session_state[arrived] = (tour.key, number)
        load(stop.query | link_query())  # the stop's setup, under any settings its link changed
    _card(tour, number, stop, walk)
    return {TOUR: tour.key, STOP: str(number)}


def _card(tour: Tour, number: int, stop: Stop, walk: Walk | None) -> None:
    last = number == len(tour.stops)
    # In the sidebar: the page's own picture keeps its one screen (a projector's 1280×720).
    with st.sidebar.container(border=True, key="tour_card"):
        st.progress(
            number / len(tour.stops),
            text=f"**{tour.title}** · stop {number} of {len(tour.stops)} · "
            f"minute {tour.elapsed(number)} of {tour.minutes}",
        )
        back, on = st.columns(2)
        back.button(
            "Back",
            key="tour_back",
            shortcut="ArrowLeft",
            on_click=_move,
            args=(tour, number, -1, walk),
            disabled=number == 1 and stop.steps is None,
            width="stretch",
        )
        on.button(
            "Finish" if last else "Next",
            key="tour_next",
            shortcut="ArrowRight",
            type="primary",
            on_click=_move,
            args=(tour, number, 1, walk),
            width="stretch",
        )
        st.markdown(f"**{stop.title}.** {stop.say} {ACTIONS[stop.action]}".strip())
        if stop.lesson is not None:
            st.popover("Why?", width="stretch").markdown(LESSONS[stop.lesson].why)
    st.html(
        f"<style>.st-key-{stop.highlight} {{ outline: 0.25rem solid {HIGHLIGHT}; "
        "outline-offset: 0.2rem; border-radius: 0.5rem; }</style>"
    )


def _move(tour: Tour, number: int, by: int, walk: Walk | None) -> None:
    """Back (-1) or on (+1): a walking stop's own steps first, then the stop before or after
    (the page switch happens in the run that follows: not from a callback)."""
    steps = tour.stops[number - 1].steps
    if walk is not None and steps is not None and walk(by, steps):
        return
    st.session_state[GOING] = number + by


def _go(tour: Tour, number: int) -> None:
    """To stop `number`, on its page, its setup loaded there (a switch ends this run)."""
    page = tour.stops[number - 1].page
    st.switch_page(f"pages/{page}.py", query_params=tour.link(number) | switches_query() | {LOAD: "1"})


def _leave() -> None:
    """After the last stop: Home, the tour over."""
    st.switch_page("pages/home.py", query_params=switches_query())
