"""Sidebar widgets drawn from a page's specs, and the settings that survive a page switch."""

from collections.abc import Callable, Mapping
from typing import Any

import streamlit as st

from mlp.lessons.settings import LinkNote, Spec, widget_values


def page_settings(
    prefix: str, specs: Mapping[str, Spec], first: Callable[[], tuple[Any, list[LinkNote]]]
) -> tuple[Any, list[LinkNote]]:
    """A page's saved settings, and its sidebar's widgets filled from them where they are missing.

    Streamlit forgets a widget's value when its page is not shown, so the settings live under
    `prefix + "settings"` and refill the widgets on the way back. On a visitor's first view
    `first()` gives them (from the link, or the defaults) with notes on what the link got wrong.
    """
    key, notes = prefix + "settings", []
    if key not in st.session_state:
        st.session_state[key], notes = first()
    for name, value in widget_values(st.session_state[key], prefix, specs).items():
        st.session_state.setdefault(name, value)
    return st.session_state[key], notes


def load_settings(prefix: str, specs: Mapping[str, Spec], settings: Any) -> None:
    """Settings (a preset, a loaded link) into the page's saved settings and its widgets."""
    st.session_state[prefix + "settings"] = settings
    st.session_state.update(widget_values(settings, prefix, specs))


def stops(label: str, spec: Spec, key: str, fmt: Callable = lambda v: f"{v:g}", **kwargs) -> Any:
    """A select-slider over the spec's stops (and a linked value between them)."""
    return st.select_slider(label, spec.options(st.session_state[key]), key=key, format_func=fmt, **kwargs)


def slider(label: str, spec: Spec, key: str, **kwargs) -> Any:
    """A slider over the spec's range and step."""
    return st.slider(label, spec.low, spec.high, step=spec.step, key=key, **kwargs)


def number(label: str, spec: Spec, key: str, **kwargs) -> Any:
    """A number input over the spec's range and step."""
    return st.number_input(label, spec.low, spec.high, step=spec.step, key=key, **kwargs)
