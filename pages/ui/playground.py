"""The 2D playground's panels (the control bar, the network view, the engines compared, sharing
and export) and what its clicks do to the page before it reruns (pausing, loading a preset or a link)."""

from collections.abc import Callable, Mapping

import streamlit as st

from mlp.data.edits import Edits
from mlp.export.pieces import model_code
from mlp.figures.network import hidden_space_figure, unit_figure
from mlp.lessons.playground import ENGINE_NAMES, PRESETS, SPECS, from_query, link_edits
from mlp.runs.exports import playground_files
from mlp.runs.network_view import REGRESSION_OUTPUT, NetworkPicture, hidden_space
from mlp.runs.playground import Playground
from mlp.train import describe_path
from pages.serving.frames import plane_stream
from pages.ui.controls import control, load_settings
from pages.ui.shell import COMPARE, chart, settings_query, switches_query
from pages.ui.text import say
from pages.ui.touch import EDITS_KEY, click


def stop_playing() -> None:
    """Before anything else a click does: the page and the plane's frames both stop."""
    st.session_state.pg_playing = False
    plane_stream().pause()  # no frame trains after the click is heard


def preset() -> None:
    stop_playing()
    load_settings("pg_", SPECS, PRESETS[st.session_state.pg_preset])
    st.session_state[EDITS_KEY] = Edits()  # a preset is its set as made, without clicks' points


def load(query: Mapping[str, str]) -> None:
    """Fill the page from a link's query (a lesson, its comparison, a challenge's start) as a fresh
    run: the same seed gives the same initial weights, so the one setting changed is the only
    difference. The address bar shows it at once."""
    stop_playing()
    settings = from_query(settings_query(query))[0]
    load_settings("pg_", SPECS, settings)
    st.session_state[EDITS_KEY] = link_edits(query, settings)
    st.session_state.pg_run, st.session_state.pg_compare = None, query.get(COMPARE) == "1"
    st.query_params.from_dict(dict(query) | switches_query())


FOCUS_KEY = "pg_focus"  # the unit the plane shows instead of the output, (layer, unit), if any
PROBE_KEY = "pg_probe"  # the point (x1, x2) last clicked while a unit is on the plane
RERUN_KEY = "pg_rerun_page"  # a click heard in the live panel (a fragment) that the whole page must show


def plane_click(x: float, y: float) -> None:
    """A click on the plane: with a unit on the plane, the point whose computation to show;
    else what the touch tool says (pages/ui/touch.py): a point added, or points erased."""
    if st.session_state.get(FOCUS_KEY) is not None:
        st.session_state[PROBE_KEY] = (x, y)
    else:
        click(x, y)


def view_toggles() -> None:
    """How the plane looks: the test points shown or not, the output discretized or shaded."""
    with st.container(horizontal=True, gap="medium"):
        st.toggle("Show test points", key="pg_show_test")
        control("pg_", SPECS, "discretize")


UPLOAD_HELP = (
    "A header and one point a row. x1, x2, label: classes (whole numbers, 2 to 8 of them). "
    "x1, x2, value: a regression (real numbers; beyond ±1.5 they are scaled into [-1, 1])."
)
PLAY_KEY = "Space"  # the bar's keyboard: Space plays and pauses, S takes one step
STEP_KEY = "S"


def pause_then(action: Callable[[Playground], None]) -> None:
    stop_playing()
    action(st.session_state.pg_run)


def _new_seed(_: Playground) -> None:
    st.session_state.pg_seed += 1


ACTIONS = [  # (label, icon, key, what it does to the run, help, shortcut); each pauses first
    ("Step", None, "pg_step", lambda r: r.run(1), "One optimizer step.", STEP_KEY),
    ("Epoch", None, "pg_epoch", Playground.run_epoch, "To the end of the current pass over the data.", None),
    (
        "Reset",
        ":material/restart_alt:",
        "pg_reset",
        Playground.reset,
        "The same initial weights and batches.",
        None,
    ),
    ("New init", ":material/casino:", "pg_reinit", _new_seed, "The next seed: other initial weights.", None),
]


def controls_bar(playing: bool, play: Callable[[bool], None]) -> None:
    """TensorFlow Playground's bar, above the plane: Play/Pause, Step, Epoch, Reset, New init, speed.

    Play and Pause are one button (one key) whose label changes: a visitor who pressed it with
    Enter or Space keeps the focus on it, where the next press pauses."""
    with st.container(key="pg_controls", horizontal=True, vertical_alignment="bottom", gap="small"):
        label, icon = ("Pause", ":material/pause:") if playing else ("Play", ":material/play_arrow:")
        st.button(
            label,
            icon=icon,
            key="pg_play",
            type="primary",
            on_click=play,
            args=(not playing,),
            shortcut=PLAY_KEY,
        )
        for label, icon, key, action, tip, shortcut in ACTIONS:
            st.button(
                label, icon=icon, key=key, on_click=pause_then, args=(action,), help=tip, shortcut=shortcut
            )
        control("pg_", SPECS, "speed", width=240)


def unit_panel(run: Playground, picture: NetworkPicture) -> None:
    """A chosen unit, large; and for a 2-unit last hidden layer, the space the output layer sees."""
    units = [(i, j) for i in range(1, len(picture.maps)) for j in range(len(picture.maps[i]))]
    names = {(i, j): _unit_name(picture, i, j) for i, j in units}
    left, right = st.columns(2, gap="medium")
    with left:
        chosen = st.selectbox(
            "Look closer at a unit",
            units,
            key="pg_unit",
            format_func=names.get,
            index=0,
            help="Its output over the whole plane: orange where it is positive, blue where negative.",
            on_change=lambda: st.session_state.update(
                {FOCUS_KEY: st.session_state.pg_unit, PROBE_KEY: None, RERUN_KEY: True}
            ),
        )
        if chosen is not None and chosen in names:
            i, j = chosen
            chart(unit_figure(picture.maps[i][j], run.points.extent, names[chosen]), key="pg_unit_map")
    with right:
        if (space := hidden_space(run)) is not None:
            figure = hidden_space_figure(space.points, space.labels, space.probs, space.extent, space.lines)
            chart(figure, key="pg_hidden_space")
            st.caption(
                "The last hidden layer has 2 units, so its whole world is a plane: the output layer "
                "can only draw straight lines here, and the layers before have bent the data until "
                "straight lines suffice (the grey lines are the input plane's grid, bent)."
            )
        elif run.points.task == "regress":
            st.caption(
                "A regression's output is a value, not classes: the hidden-space view is for classifiers."
            )
        else:
            st.caption(
                "Make the last hidden layer 2 units wide (e.g. hidden widths 16, 2) to see the plane "
                "as the output layer sees it."
            )


def _unit_name(picture, i: int, j: int) -> str:
    if i == len(picture.maps) - 1 and picture.labels[i] == [REGRESSION_OUTPUT]:
        return "output: the predicted value"
    if i == len(picture.maps) - 1:
        return f"output: probability of class {j}"
    dead = " (dead)" if picture.dead[i][j] else ""
    return f"layer {i}, unit {j + 1}{dead}"


def compare_panel(run: Playground, dropout: float) -> None:
    """Train a twin on the other engine alongside, from the same start."""
    with st.expander("Compare manual backprop with autograd"):
        st.markdown(
            f"Train a twin with **{ENGINE_NAMES[run.other_engine]}** from the same initial weights, "
            "batches and optimizer, in lockstep. Its train loss is drawn dashed; the gap stays at float32 "
            "rounding."
        )
        compare = st.toggle("Run both engines", key="pg_compare", disabled=dropout > 0)
        if compare != (run.twin is not None):
            try:
                run.compare(compare)
            except ValueError as err:  # dropout switched on since: the manual engine has none
                st.warning(say(err))
        st.caption(describe_path(run.trainer))  # NumPy or torch: which path the run's steps take


@st.fragment
def export_panel(run: Playground, uploaded: bool, link: str = "") -> None:
    """The run's weights, architecture, history and points as files, as of one step.

    The files are made when the panel opens (or on Refresh) and handed over as bytes. A
    deferred download would be made on the click, but Streamlit drops a made file after two
    script runs anywhere on the server, which a class playing does in milliseconds: the click
    would then fetch nothing.
    """
    with st.expander("Export", key="pg_export", on_change="rerun") as box:
        if not box.open:
            return
        if uploaded:
            st.warning("Uploaded points are not part of a link; share the CSV along with it.")
        with run.lock:  # one step's files: the frames wait
            step = run.trainer.step_count
            files = [(label, make(), name) for label, make, name in playground_files(run, link)]
            architecture = model_code(run.model.config)
        st.caption(
            "The notebook and the script are this run in plain PyTorch and NumPy: its data, its network, "
            "its training, from the start. They print the train loss and test accuracy PyTorch gets; a small "
            "network here steps in NumPy, whose last bits round differently: on most setups the two are "
            "the same, a chaotic run (a very large step) or a near-perfect fit's test loss can part."
        )
        for col, (label, data, name) in zip(st.columns(3) * 2, files, strict=True):
            col.download_button(label, data=data, file_name=name, on_click="ignore")
        with st.popover("Copy as code", icon=":material/code:"):
            st.caption("The network alone, in PyTorch (copy it with the button at its top right):")
            st.code(architecture, language="python")
        note, refresh = st.columns([4, 1], vertical_alignment="center")
        playing = " It keeps training: Refresh for the latest." if st.session_state.get("pg_playing") else ""
        note.caption(f"The run as of step {step:,}.{playing}")
        refresh.button("Refresh", key="pg_export_refresh", icon=":material/refresh:")
