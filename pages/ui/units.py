"""The 2D playground's network view to click, and what a click opens: a unit on the plane with its
computation at a clicked point (CNN Explainer's real numbers), and a weight to set by hand
(TensorFlow Playground's users asked for it: its issues #35 and #198)."""

from __future__ import annotations

import streamlit as st

from mlp.figures.network import network_svg
from mlp.runs.network_view import NetworkPicture, network_picture
from mlp.runs.playground import Playground
from mlp.runs.units import (
    Edge,
    Term,
    UnitComputation,
    UnitStep,
    check_edge,
    input_names,
    parse_weight,
    reset_weight,
    set_weight,
    trained_value,
    unit_computation,
    unit_name,
    weight,
)
from pages.ui.components import component
from pages.ui.playground import FOCUS_KEY, PROBE_KEY, RERUN_KEY
from pages.ui.shell import presenter
from pages.ui.text import say

NETWORK_KEY = "pg_network_view"  # the clickable drawing
EDGE_KEY = "pg_edge"  # the weight being edited, (layer, out, in), if any
TEXT_KEY = "pg_weight_text"
ERROR_KEY = "pg_weight_error"
MIN_PX = 460  # the drawing's narrowest: its labels ≥ 12 px (a projector's column is 482)
MAX_TERMS = 6  # terms of z written out; the rest are counted
TERMS_A_LINE = 2  # ...and how many a line of the narrow column holds


def network_view(run: Playground) -> NetworkPicture:
    """TensorFlow Playground's picture of the network as it trains, sized to read in its column:
    a click on a unit puts it on the plane (again: takes it off), a click on an edge opens its
    weight's editor. Drawn in the live panel (a fragment): a click reruns the whole page, whose
    plane must change."""
    picture = network_picture(run)
    unit = st.session_state.get(FOCUS_KEY)
    svg = network_svg(
        picture.widths,
        picture.maps,
        picture.weights,
        picture.dead,
        picture.labels,
        font=44.0 if presenter() else 32.0,
        interactive=True,
        selected=tuple(unit) if unit is not None else None,
    )
    # In the page's own DOM (no isolated styles): its text is measured and read as the page's is
    component("network", isolate_styles=False)(
        key=NETWORK_KEY,
        data={"svg": svg, "minPx": MIN_PX},
        on_unit_change=_unit_clicked,
        on_edge_change=_edge_clicked,
    )
    if picture.zeros:
        st.caption(picture.zeros)
    if st.session_state.pop(RERUN_KEY, False):
        st.rerun()
    return picture


def focus(unit: tuple[int, int] | None) -> None:
    """Put a unit on the plane (None: the output again); the clicked point goes with the old one."""
    st.session_state[FOCUS_KEY], st.session_state[PROBE_KEY] = unit, None


def _unit_clicked() -> None:
    click = (st.session_state[NETWORK_KEY] or {}).get("unit")
    if click:
        unit = (int(click["layer"]), int(click["unit"]))
        focus(None if st.session_state.get(FOCUS_KEY) == unit else unit)
        st.session_state.pg_unit = unit  # the select box below follows
        st.session_state[RERUN_KEY] = True


def _edge_clicked() -> None:
    click = (st.session_state[NETWORK_KEY] or {}).get("edge")
    if click:
        open_editor(Edge(int(click["layer"]), int(click["out"]), int(click["inp"])))
        st.session_state[RERUN_KEY] = True


def open_editor(edge: Edge) -> None:
    """The weight's editor, its box holding the weight's value now."""
    try:
        value = weight(st.session_state.pg_run, edge)
    except ValueError:
        return
    st.session_state[EDGE_KEY] = (edge.layer, edge.out, edge.inp)
    st.session_state[TEXT_KEY], st.session_state[ERROR_KEY] = f"{value:.4f}", None


# --- a weight set by hand ------------------------------------------------------------------------


def _apply(edge: Edge) -> None:
    try:
        set_weight(st.session_state.pg_run, edge, parse_weight(st.session_state[TEXT_KEY]))
        st.session_state[ERROR_KEY] = None
    except ValueError as err:  # the box keeps what was typed; the weight keeps its value
        st.session_state[ERROR_KEY] = say(err)
    st.session_state[RERUN_KEY] = True


def _reset(edge: Edge) -> None:
    run = st.session_state.pg_run
    reset_weight(run, edge)
    st.session_state[TEXT_KEY], st.session_state[ERROR_KEY] = f"{weight(run, edge):.4f}", None
    st.session_state[RERUN_KEY] = True


def _close() -> None:
    st.session_state[EDGE_KEY] = None
    st.session_state[RERUN_KEY] = True


def weight_editor(run: Playground) -> None:
    """The clicked edge's weight: its value, a box to type another, Apply, and Reset to the
    value it had before it was set by hand. The plane and its numbers follow at once."""
    if (chosen := st.session_state.get(EDGE_KEY)) is None:
        return
    edge = Edge(*chosen)
    try:
        check_edge(run, edge)
    except ValueError:  # a new network since: its weights are other ones
        st.session_state[EDGE_KEY] = None
        return
    source, target = input_names(run, edge.layer)[edge.inp], unit_name(run, (edge.layer, edge.out))
    trained = trained_value(run, edge)
    with st.container(key="pg_weight", border=True):
        was = f" (trained value {trained:.4f})" if trained is not None else ""
        st.markdown(f"**Weight from {source} to {target}** = {weight(run, edge):.4f}{was}")
        with st.container(horizontal=True, vertical_alignment="bottom", gap="small"):
            st.text_input("New value", key=TEXT_KEY, width=140)
            st.button("Apply", key="pg_weight_apply", type="primary", on_click=_apply, args=(edge,))
            st.button(
                "Reset to trained value",
                key="pg_weight_reset",
                on_click=_reset,
                args=(edge,),
                disabled=trained is None,
                help="The value this weight had before you set it.",
            )
            st.button("Close", key="pg_weight_close", on_click=_close)
        if error := st.session_state.get(ERROR_KEY):
            st.error(error, icon=":material/error:")
        if run.twin is not None:
            st.caption("Set in both engines' networks, so that they stay comparable.")


# --- a unit on the plane -------------------------------------------------------------------------


def unit_on_plane(run: Playground) -> None:
    """Under the plane while a unit is on it: the way back to the output, a keyboard's way to its
    weights, and its computation at the point last clicked."""
    unit = st.session_state.get(FOCUS_KEY)
    if unit is None:
        return
    unit = tuple(unit)
    if (name := unit_name(run, unit)) is None:  # a new network without it
        st.session_state[FOCUS_KEY] = None
        return
    with st.container(key="pg_unit_math"):
        with st.container(horizontal=True, vertical_alignment="bottom", gap="small"):
            st.button(
                "Show the output",
                key="pg_show_output",
                icon=":material/arrow_back:",
                on_click=focus,
                args=(None,),
            )
            names = input_names(run, unit[0])
            st.selectbox(
                "Set one of its weights",
                range(len(names)),
                index=None,
                key="pg_unit_weight",
                format_func=lambda i: f"from {names[i]}",
                placeholder="Choose an input…",
                width=260,
                on_change=lambda: open_editor(Edge(unit[0], unit[1], st.session_state.pg_unit_weight)),
            )
        probe = st.session_state.get(PROBE_KEY)
        if probe is None:
            st.caption(f"Click a point on the plane to see how {name} computes its value there.")
            return
        show_computation(unit_computation(run, unit, tuple(probe)))


def _tex_name(name: str, layer: int) -> str:
    """An input's name as the math writes it: x_1, x_1^2, \\sin x_2, a^{[1]}_3."""
    if name.startswith("layer "):
        return f"a^{{[{layer - 1}]}}_{{{name.rsplit(' ', 1)[1]}}}"
    return (
        name.replace("sin ", r"\sin ")
        .replace("x1", "x_1")
        .replace("x2", "x_2")
        .replace("²", "^2")
        .replace("·", "")
    )


def _num(v: float) -> str:
    return f"{v:.2f}" if v >= 0 else f"({v:.2f})"


def z_tex(u: UnitStep) -> str:
    """z = Σ wᵢ·aᵢ + b with the numbers, the largest terms written out when there are many."""
    terms: list[Term] = u.terms
    if len(terms) > MAX_TERMS:
        largest = sorted(range(len(terms)), key=lambda i: -abs(terms[i].wa))[:MAX_TERMS]
        terms = [terms[i] for i in sorted(largest)]
    parts = [rf"\underbrace{{{_num(t.w)} \cdot {_num(t.a)}}}_{{{_tex_name(t.name, u.layer)}}}" for t in terms]
    if len(u.terms) > len(terms):
        parts.append(rf"\dots_{{\text{{{len(u.terms) - len(terms)} more}}}}")
    parts.append(rf"\underbrace{{{_num(u.b)}}}_{{b}}")
    # A column is narrow: two terms a line, aligned under the first.
    lines = [" + ".join(parts[i : i + TERMS_A_LINE]) for i in range(0, len(parts), TERMS_A_LINE)]
    return r"\begin{aligned} z &= " + r" \\ &\quad + ".join(lines) + rf" \\ &= {u.z:.3f} \end{{aligned}}"


def a_tex(u: UnitStep) -> str:
    if u.f == "softmax":
        return rf"p_{{{u.unit}}} = \mathrm{{softmax}}(z)_{{{u.unit}}} = {u.a:.3f}"
    if u.f == "identity":  # a regression's output: the value is z itself
        return rf"\hat y = z = {u.a:.3f}"
    f = u.f.replace("_", r"\_")
    return rf"a = \mathrm{{{f}}}(z) = \mathrm{{{f}}}({u.z:.3f}) = {u.a:.3f}"


def _short(name: str) -> str:
    """ "layer 2, unit 5" -> "5"; "output: class 1" -> "1" (the table's header names the rest)."""
    return name.rsplit(" ", 1)[-1]


def show_computation(c: UnitComputation) -> None:
    """The unit's z and a at the point, the next layer's units it feeds, and the output there."""
    u = c.unit
    x1, x2 = c.point
    st.markdown(f"**{u.name}** at (x1, x2) = ({x1:.2f}, {x2:.2f}), step {c.step:,}:")
    st.latex(z_tex(u))
    st.latex(a_tex(u))
    if c.feeds:
        unit = {"softmax": "class", "identity": "output"}.get(c.next_f, f"layer {u.layer + 1} unit")
        rows = [f"| {_short(f.name)} | {f.w:.3f} | {f.wa:.3f} | {f.z:.3f} | {f.a:.3f} |" for f in c.feeds]
        more = f" ({c.more_feeds} more not shown)" if c.more_feeds else ""
        what = {"softmax": "p", "identity": "ŷ"}.get(c.next_f, f"a ({c.next_f})")
        st.markdown(
            f"It feeds the next layer{more}: w is its weight into each unit, w · a its share of that "
            f"unit's z.\n\n| {unit} | w | w · a | z | {what} |\n|---|---:|---:|---:|---:|\n" + "\n".join(rows)
        )
    if c.unit.f == "identity":  # a regression's output unit: its value is said above
        return
    st.markdown("The output at this point:")
    if c.next_f == "identity":  # a regression: one output, its value
        st.latex(rf"\hat y = z = {c.logits[0]:.3f}")
        return
    logits = ", ".join(f"{z:.2f}" for z in c.logits)
    probs = ", ".join(f"{p:.3f}" for p in c.probs)
    st.latex(rf"\begin{{aligned}} z &= ({logits}) \\ \mathrm{{softmax}}(z) &= ({probs}) \end{{aligned}}")
