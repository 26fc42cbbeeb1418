"""Lessons and challenges on a page, and the page's link to copy.

A page hands in `load(query)`, which fills it from a link's query (the same path a link takes),
so that a lesson, its comparison and a challenge's start are each one click.
"""

from collections.abc import Callable, Mapping
from urllib.parse import urlencode

import streamlit as st

from mlp.curriculum.catalogue import LESSON, LESSONS, Setup, lessons_for
from mlp.curriculum.challenges import CHALLENGE, CHALLENGES, Challenge, Score, challenges_for
from mlp.links.settings import LinkNote
from pages.ui.rooms import post_best
from pages.ui.shell import LOAD, link_query, presenter, switches_query
from pages.ui.text import show_link_notes
from pages.ui.tour import Walk, tour_card

Load = Callable[[Mapping[str, str]], None]


def _from_link(prefix: str, name: str, setups: Mapping[str, Setup], load: Load) -> None:
    """A lesson or challenge a link names, chosen and loaded the first time it appears (or when a
    lesson's button on another page sent the visitor here, `load=1`): its setup, under any
    settings the link itself carries (`?lesson=xor-line` alone is a whole link).

    Streamlit forgets a widget's value when its page is not shown: the choice is kept apart and
    put back when the visitor comes back, so a lesson's panel stays with it across pages."""
    key, kept = prefix + name, f"{prefix}{name}_kept"
    if key not in st.session_state and st.session_state.get(kept) in setups:
        st.session_state[key] = st.session_state[kept]
    linked = st.query_params.get(name)
    seen = f"{prefix}{name}_linked"
    sent = st.query_params.get(LOAD) == "1"
    if linked in setups and (st.session_state.get(seen) != linked or sent):
        st.session_state[seen] = st.session_state[key] = linked
        load(setups[linked].query | link_query())
    elif linked is not None and linked not in setups:
        show_link_notes([LinkNote(name, linked, f"this page has no {name} of that name")])


def _keep(prefix: str, name: str) -> None:
    """After the picker: what it shows now, kept for the visitor's way back to this page."""
    st.session_state[f"{prefix}{name}_kept"] = st.session_state.get(prefix + name)


def lesson_panel(prefix: str, page: str, load: Load, walk: Walk | None = None) -> dict[str, str]:
    """The sidebar's lesson picker and the chosen lesson's two sentences; the link's part. On a
    tour's stop, the tour's card instead (`walk`: the page's own steps, pages/ui/tour.py)."""
    if (tour_link := tour_card(prefix, page, load, walk)) is not None:
        return tour_link
    lessons = {lesson.key: lesson for lesson in lessons_for(page)}
    key = prefix + LESSON
    _from_link(prefix, LESSON, {k: lesson.setup_on(page) for k, lesson in lessons.items()}, load)

    def chosen() -> None:
        if (lesson := lessons.get(st.session_state[key])) is not None:
            load(lesson.link(lesson.setup_on(page)))
            st.session_state[f"{prefix}{LESSON}_linked"] = lesson.key  # not to be loaded again

    st.sidebar.selectbox(
        "Lesson",
        list(lessons),
        key=key,
        index=None,
        placeholder="Choose a lesson…",
        format_func=lambda k: LESSONS[k].title,
        on_change=chosen,
        help="Fills the page with a setup that shows one idea, and says what to watch for.",
    )
    _keep(prefix, LESSON)
    lesson = lessons.get(st.session_state.get(key))
    if lesson is None:
        return {}
    with st.container(border=True, key=f"{prefix}lesson_box"):
        st.markdown(f":material/school: **{lesson.title}.** **Watch for:** {lesson.watch_on(page)}")
        if not presenter():
            st.markdown(f"**Why:** {lesson.why}")
        setups = [("Lesson's setup", lesson.setup), *lesson.compare]
        buttons = st.container(horizontal=True, key=f"{prefix}lesson_buttons")
        for i, (label, setup) in enumerate(setups):
            name = f"{prefix}lesson_start" if i == 0 else f"{prefix}lesson_then{'' if i == 1 else i}"
            _go(buttons, label, lesson.link(setup), setup.page, page, load, name, primary=i > 0)
    return {LESSON: lesson.key}


def _go(
    box, label: str, link: dict[str, str], to: str, page: str, load: Load, key: str, primary: bool
) -> None:
    """A button that loads the setup of `link` here, as a fresh run; or a link to its page `to`."""
    if to == page:
        box.button(label, key=key, on_click=load, args=(link,), type="primary" if primary else "secondary")
    else:
        sent = dict(link) | {LOAD: "1"} | switches_query()  # loaded there even if seen there before
        box.page_link(f"pages/{to}.py", label=label, icon=":material/arrow_forward:", query_params=sent)


def challenge_picker(prefix: str, page: str, load: Load) -> tuple[Challenge | None, dict[str, str]]:
    """The sidebar's challenge picker; choosing one loads its start. (challenge, the link's part)."""
    challenges = {c.key: c for c in challenges_for(page)}
    key = prefix + CHALLENGE
    _from_link(prefix, CHALLENGE, {k: c.start for k, c in challenges.items()}, load)

    def chosen() -> None:
        if (challenge := challenges.get(st.session_state[key])) is not None:
            load(challenge.start.query)
            st.session_state[f"{prefix}{CHALLENGE}_linked"] = challenge.key  # not to be loaded again

    st.sidebar.selectbox(
        "Challenge",
        list(challenges),
        key=key,
        index=None,
        placeholder="Take a challenge…",
        format_func=lambda k: CHALLENGES[k].goal,
        on_change=chosen,
        help="A goal with numbers; the page checks it as you train and says when it is met.",
    )
    _keep(prefix, CHALLENGE)
    challenge = challenges.get(st.session_state.get(key))
    return challenge, ({CHALLENGE: challenge.key} if challenge else {})


def challenge_status(
    prefix: str,
    challenge: Challenge,
    settings,
    scores: list[Score],
    link: dict[str, str],
    hidden: Callable[[int], float | None] | None = None,
    own_data: bool = True,
    altered: str | None = None,
) -> None:
    """The challenge, checked against the run now; once met, the settings that met it stay shown.
    In a class room, the best result goes to the class board (`hidden(epoch)`: the run's score on
    the challenge's hidden part at the best result's epoch), unless its link can't reproduce the
    run: it trains on points of its own (`own_data` False: uploaded, or added or erased by hand),
    or `altered` says what else (a weight set by hand, settings changed mid-run)."""
    verdict = challenge.check(settings, scores)
    board = post_best(challenge, settings, scores, link, hidden, own_data, altered)
    met_key = f"{prefix}met_{challenge.key}"
    if verdict.met and met_key not in st.session_state:
        st.session_state[met_key] = (verdict.text, link)
    with st.container(border=True, key=f"{prefix}challenge_box"):
        st.markdown(f":material/flag: **Challenge:** {challenge.goal}")
        if met := st.session_state.get(met_key):
            st.success(f"**Challenge met.** {met[0]} The settings that met it:", icon=":material/trophy:")
            st.code(page_url(met[1]), language=None, wrap_lines=True)
        if not verdict.met:
            st.caption(f"{verdict.text} Hint: {challenge.hint}")
        if board:
            st.caption(board)


def page_url(query: Mapping[str, str]) -> str:
    """This page's full address with `query`."""
    return f"{(st.context.url or '').split('?')[0]}?{urlencode(dict(query))}"


def share_link(query: Mapping[str, str]) -> None:
    """The sidebar's "link to this setup", with a copy button: what a student opens to see the same."""
    # Drawn only while open: a code block's first draw loads the browser's syntax highlighter,
    # 0.5 of the 3.5 s of main-thread script a playground's first load took in headless Chromium
    # on 2 cores, for a box most visitors never open.
    with st.sidebar.expander(
        "Link to this setup", icon=":material/link:", key="share_link", on_change="rerun"
    ) as box:
        if not box.open:
            return
        st.code(page_url(query), language=None, wrap_lines=True)
        st.caption("Copy it with the button at its top right. It opens this page as it is now.")
