"""Sidebar widgets drawn from a page's specs, and the settings that survive a page switch."""

from collections.abc import Callable, Collection, Mapping
from typing import Any

import streamlit as st

from mlp.links.settings import LinkNote, widget_values
from mlp.spec import Spec, section
from pages.ui.shell import PACED_PAGES, SHOW, for_class, link_query, presenter


def page_settings(
    prefix: str, specs: Mapping[str, Spec], first: Callable[[], tuple[Any, list[LinkNote]]]
) -> tuple[Any, list[LinkNote]]:
    """A page's saved settings, and its sidebar's widgets filled from them where they are missing.

    Streamlit forgets a widget's value when its page is not shown, so the settings live under
    `prefix + "settings"` and refill the widgets on the way back. On a visitor's first view
    `first()` gives them (from the link, or the defaults) with notes on what the link got wrong.
    """
    key, notes = prefix + "settings", []
    PACED_PAGES[prefix] = specs  # for projector mode's switch to a class's pace (pages/ui/shell.py)
    if key not in st.session_state:
        settings, notes = first()
        given = link_query()
        st.session_state[key] = for_class(settings, specs, given) if presenter() else settings
    for name, value in widget_values(st.session_state[key], prefix, specs).items():
        st.session_state.setdefault(name, value)
    return st.session_state[key], notes


def load_settings(prefix: str, specs: Mapping[str, Spec], settings: Any) -> None:
    """Settings (a preset, a loaded link) into the page's saved settings and its widgets."""
    st.session_state[prefix + "settings"] = settings
    st.session_state.update(widget_values(settings, prefix, specs))


def control(prefix: str, specs: Mapping[str, Spec], name: str, label: str | None = None, **kwargs) -> Any:
    """The sidebar's widget for one setting, all of it from the setting's declaration (its spec:
    label, help, widget, range or choices, how values are shown, whether it applies beside the
    others' current values); `label` and `kwargs` for what only the page knows."""
    spec, key = specs[name], prefix + name
    label = label or spec.label
    kwargs.setdefault("help", spec.help)
    if spec.applies is not None:  # e.g. momentum, for the optimizers that read it
        values = {
            other: st.session_state.get(prefix + other)
            for other in specs
            if prefix + other in st.session_state
        }
        kwargs["disabled"] = kwargs.get("disabled", False) or not spec.applies_to(values)
    options = kwargs.pop("options", None) or list(spec.choices or ())  # e.g. the devices this machine has
    match spec.kind:
        case "text":
            return st.text_input(label, key=key, **kwargs)
        case "select":
            return st.selectbox(label, options, key=key, format_func=spec.show, **kwargs)
        case "multiselect":
            return st.multiselect(label, options, key=key, format_func=spec.show, **kwargs)
        case "radio":
            return st.radio(label, options, key=key, format_func=spec.show, horizontal=True, **kwargs)
        case "toggle":
            return st.toggle(label, key=key, **kwargs)
        case "stops":
            return stops(label, spec, key, spec.show, **kwargs)
        case "number":
            return number(label, spec, key, **kwargs)
        case _:
            return slider(label, spec, key, **kwargs)


def controls(
    prefix: str,
    specs: Mapping[str, Spec],
    heading: str,
    skip: Collection[str] = (),
    disabled: Mapping[str, bool] | None = None,
    labels: Mapping[str, str] | None = None,
) -> None:
    """The widgets of every setting declared under the sidebar's `heading`, in order: each
    disabled where its declaration says it doesn't apply, or where `disabled` says (what only
    the page knows: an uploaded file decides the points)."""
    for name in section(specs, heading):
        if name not in skip:
            control(prefix, specs, name, (labels or {}).get(name), disabled=(disabled or {}).get(name, False))


def stops(label: str, spec: Spec, key: str, fmt: Callable = lambda v: f"{v:g}", **kwargs) -> Any:
    """A select-slider over the spec's stops (and a linked value between them)."""
    return st.select_slider(label, spec.options(st.session_state[key]), key=key, format_func=fmt, **kwargs)


def slider(label: str, spec: Spec, key: str, **kwargs) -> Any:
    """A slider over the spec's range and step."""
    return st.slider(label, spec.low, spec.high, step=spec.step, key=key, **kwargs)


def number(label: str, spec: Spec, key: str, **kwargs) -> Any:
    """A number input over the spec's range and step."""
    return st.number_input(label, spec.low, spec.high, step=spec.step, key=key, **kwargs)


def shown_controls(prefix: str, specs: Mapping[str, Spec]) -> dict[str, str]:
    """The instructor's choice of the settings students see, TensorFlow Playground style.

    Draws a multiselect (in an expander at the end of the sidebar) over the page's settings,
    first filled from the link's `show=` (the settings' link names, comma-separated), and hides
    the others' widgets with CSS: they keep their values and go on applying. Returns what the
    page's link adds (`{"show": ...}`, or nothing when every setting is shown).
    """
    key = prefix + "shown"
    names = {spec.key: field for field, spec in specs.items()}  # link name -> settings field
    if key not in st.session_state:
        asked = [n for n in st.query_params.get(SHOW, "").split(",") if n in names]
        st.session_state[key] = asked or list(names)
    with st.sidebar.expander("Controls students see", icon=":material/visibility:"):
        st.multiselect(
            "Shown in this sidebar (and in the page's link)",
            list(names),
            key=key,
            format_func=lambda n: names[n].replace("_", " "),
            help="Hide what a lesson doesn't need: hidden settings keep their values.",
        )
    hidden = [field for name, field in names.items() if name not in st.session_state[key]]
    if hidden:
        rules = " ".join(f".st-key-{prefix}{field} {{ display: none; }}" for field in hidden)
        st.html(f"<style>{rules}</style>")
        return {SHOW: ",".join(st.session_state[key])}
    return {}
