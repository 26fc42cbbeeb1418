"""Every widget on every page, at the ends of its range and at each of its options: no crash.

Each widget is set on a fresh page (as a visitor finds it, or in a view the page opens first:
a tab, a loaded model), so one widget at a time is away from its start. A choice that brings
new widgets into view (the input that shows a toy set's picker, a lesson's setup) opens a view
of its own, and those widgets are swept there: the sweep walks into every view.

A widget's range comes from the library's limits, so no value it offers may crash the page,
nor be refused by the settings it sets (an error in the sidebar that was not there before).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

import pytest
from streamlit.runtime.state.common import TESTING_KEY
from streamlit.testing.v1 import AppTest

from mlp.io import model_to_bytes
from mlp.model import MLP
from tests.conftest import open_page

RANGED = ("slider", "number_input")  # set to their minimum, then their maximum
CHOICES = ("select_slider", "selectbox", "radio", "segmented_control", "pills", "multiselect")
SWITCHES = ("toggle", "checkbox")  # flipped, then back
INT = 0  # the INT of NumberInput's and Slider's DataType


@dataclass(frozen=True)
class View:
    """Where a sweep starts: a page, set up by `setup`, then widgets set in order (`path`)."""

    page: str
    name: str = "first view"
    setup: Callable[[AppTest], None] | None = None
    path: tuple[tuple[str, str, object], ...] = ()  # (kind, key, value)

    def open(self) -> AppTest:
        app = open_page(self.page)
        if self.setup is not None:
            self.setup(app)
        for kind, key, value in self.path:
            choose(app, kind, key, value)
        assert not app.exception, (self.name, app.exception)
        return app

    def then(self, kind: str, key: str, value: object) -> View:
        return View(self.page, f"{self.name}, {key}={value!r}", self.setup, (*self.path, (kind, key, value)))


def widget(app: AppTest, kind: str, key: str):
    return next(w for w in app.get(kind) if w.key == key)


def choose(app: AppTest, kind: str, key: str, value: object) -> None:
    """Set one widget as a visitor would, and run the page."""
    found = widget(app, kind, key)
    if kind in CHOICES:
        # A browser sends an option's label. AppTest maps what it is given through the page's
        # format_func, which for a `dict.get` of labels makes a label None: labels go as they are.
        app.session_state[TESTING_KEY][found.id] = str
    found.set_value(value).run()


def values(found) -> list:
    """What a visitor can set this widget to: its range's ends, each option, on and off."""
    if found.type in RANGED:
        if found.type == "number_input":  # a number input's range is the spec's, never open-ended
            assert found.proto.has_min and found.proto.has_max, f"{found.key} has no range"
        low, high = found.proto.min, found.proto.max
        return [int(low), int(high)] if found.proto.data_type == INT else [low, high]
    if found.type in SWITCHES:
        return [not found.value, found.value]
    if found.type == "multiselect":
        return [[], *([option] for option in found.options)]
    return list(found.options)


def settable(app: AppTest) -> dict[tuple[str, str], object]:
    """The page's widgets a visitor can change, by (kind, key)."""
    found = {}
    for kind in (*RANGED, *CHOICES, *SWITCHES):
        for w in app.get(kind):
            if not w.proto.disabled:
                assert w.key, f"a {kind} without a key: {w.label}"
                found[kind, w.key] = w
    return found


def refusals(app: AppTest) -> set[str]:
    """What the sidebar says it can't use (the pages put the settings' refusals there)."""
    return {e.value for e in app.sidebar.error}


def sweep(views: list[View]) -> tuple[set[str], list[str]]:
    """Set every widget of every view to each of its values: (the keys swept, what went wrong)."""
    queue, swept, queued, problems = list(views), set(), set(), []
    while queue:
        view = queue.pop(0)
        here = settable(view.open())
        for kind, key in [k for k in here if k not in swept]:
            swept.add((kind, key))
            app = view.open()
            before = refusals(app)
            for value in values(here[kind, key]):
                choose(app, kind, key, value)
                wrong = [e.value for e in app.exception] + sorted(refusals(app) - before)
                problems += [f"{view.name}: {key} = {value!r}: {w}" for w in wrong]
                if wrong:
                    app = view.open()  # on from a page that works
                    continue
                shown = settable(app).keys() - here.keys() - swept - queued
                if kind not in RANGED and shown:  # a choice that shows more widgets: a view to sweep them in
                    queue.append(view.then(kind, key, value))
                    queued |= shown
    return {key for _, key in swept}, problems


@cache
def tiny_model() -> bytes:
    """A model file the MNIST page loads in a moment: 784 → 8 → 10."""
    return model_to_bytes(MLP(784, [8], 10, seed=0))


def mnist_tab(tab: str) -> Callable[[AppTest], None]:
    """Open one of the MNIST page's lazy tabs with a model loaded (what *Try it* needs)."""

    def setup(app: AppTest) -> None:
        app.session_state["mn_tab"] = "Keep it"
        app.run()
        app.file_uploader(key="mn_model_file").upload("tiny.safetensors", tiny_model()).run()
        app.session_state["mn_tab"] = tab
        app.run()

    return setup


MNIST_TABS = ("Evaluate", "Try it", "Keep it", "Compare runs")
PAGES = {
    "pages/home.py": ([View("pages/home.py")], {"app_projector"}),
    "pages/forward_backward.py": (
        [View("pages/forward_backward.py")],
        {"fb_init_depth", "fb_init_width", "fb_toy_kind", "fb_k", "fb_jump", "fb_backend"},
    ),
    "pages/playground.py": (
        [View("pages/playground.py")],
        {"pg_classes", "pg_speed", "pg_unit", "pg_batch_size", "pg_engine", "pg_shown"},
    ),
    "pages/mnist.py": (
        [View("pages/mnist.py"), *(View("pages/mnist.py", tab, mnist_tab(tab)) for tab in MNIST_TABS)],
        {"mn_pick", "mn_lr", "mn_epochs", "mn_dropout", "mn_seed"},
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("page", list(PAGES))
def test_every_widget_at_every_value_leaves_the_page_working(page):
    views, expected = PAGES[page]
    swept, problems = sweep(views)
    print(f"{page}: {len(swept)} widgets swept")
    assert expected <= swept, f"not reached: {expected - swept}"
    assert not problems, "\n".join(problems)
