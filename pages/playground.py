"""2D playground: train a small network live on toy data and watch its decision boundary."""

import functools

import streamlit as st

import pages.ui as ui
from mlp.curriculum.challenges import hidden_points, playground_scores
from mlp.data import MULTICLASS_KINDS, read_points_csv, task_of
from mlp.figures.classes import confusion_figure
from mlp.figures.curves import epoch_curves_figure
from mlp.figures.plane import plane_points
from mlp.lessons.playground import DATA, PRESETS, SPECS, from_query, from_widgets, link, train_curve_name
from mlp.runs.playground import Playground, current_run
from mlp.spec import NETWORK, TRAINING
from mlp.train import describe_schedule
from pages.serving.frames import plane_stream
from pages.serving.live import heartbeat, live, steady
from pages.ui import playground as panels
from pages.ui import touch, units
from pages.ui.rooms import hidden_score, room_seed
from pages.ui.shell import COMPARE

ui.require_shell()

PANEL_SECONDS = 1.0  # curves, confusion and unit maps change slowly: redraw them once a second


# --- the settings: the link's on a first visit, else the saved ones -------------------------------
saved, notes = ui.page_settings("pg_", SPECS, lambda: from_query(ui.link_query()))
st.session_state.setdefault("pg_playing", False)
st.session_state.setdefault("pg_compare", st.query_params.get(COMPARE) == "1")
st.session_state.setdefault("pg_show_test", True)

ui.page_header(
    "2D playground",
    "Train a small network on toy data and watch it carve up the plane. Every class is a colour; "
    "the shading is how sure the network is (in a regression, the value it predicts: blue below 0, "
    "orange above). Filled points train the network, hollow ones test it; press a class under the "
    "plane, then click the plane to add its points.",
)
ui.show_link_notes(notes)
lesson_link = ui.lesson_panel("pg_", "playground", panels.load)
challenge, challenge_link = ui.challenge_picker("pg_", "playground", panels.load)

# --- settings (sidebar) ------------------------------------------------------------------------
with st.sidebar:
    st.selectbox(
        "Preset", list(PRESETS), key="pg_preset", index=None, placeholder="Load…", on_change=panels.preset
    )
    st.subheader("Data")
    upload = st.file_uploader(
        "Your points (CSV: x1, x2, label or value)",
        "csv",
        key="pg_upload",
        max_upload_size=2,
        help=panels.UPLOAD_HELP,
    )
    from_file = upload is not None  # the file decides the points: what makes points doesn't apply
    kind = st.session_state.pg_kind
    ui.controls(
        "pg_",
        SPECS,
        DATA,
        skip=("data_seed",) if kind in MULTICLASS_KINDS else ("classes", "data_seed"),
        disabled=dict.fromkeys(("kind", "n", "noise", "classes"), from_file),
        labels={"classes": "Arms" if kind == "spiral" else "Classes"},
    )
    seed_col, regen_col = st.columns(2, vertical_alignment="bottom")
    with seed_col:
        ui.control("pg_", SPECS, "data_seed")
    regen_col.button(
        "New points",
        key="pg_regen",
        on_click=lambda: st.session_state.update(pg_data_seed=st.session_state.pg_data_seed + 1),
    )
    st.subheader(NETWORK)
    ui.controls("pg_", SPECS, NETWORK)  # dropout off for the manual engine: its declaration says so
    st.subheader(TRAINING)
    ui.controls("pg_", SPECS, TRAINING)  # momentum only for the optimizers that read it

# --- settings -> the run -------------------------------------------------------------------------
widgets = {name: st.session_state[f"pg_{name}"] for name in SPECS}
settings, problems = from_widgets(widgets, saved)
st.session_state.pg_settings = settings
for problem in problems:
    st.sidebar.error(f"{ui.say(problem)} Keeping the previous value.")
st.sidebar.caption(describe_schedule(settings.train_config(1, task_of(settings.kind))))

uploaded = None
if upload is not None:
    try:
        uploaded = read_points_csv(upload.getvalue(), upload.name)
    except ValueError as err:
        st.error(f"{ui.literal(upload.name)}: {ui.say(err)} Using the generated data instead.")
previous: Playground | None = st.session_state.get("pg_run")
run = current_run(previous, settings, uploaded, upload.file_id if uploaded else "", touch.edits())
st.session_state[touch.EDITS_KEY] = run.edits  # the clicks' points belong to one set: a new one drops them
if run is not previous:
    st.session_state.pg_run, st.session_state.pg_playing = run, False
if uploaded is not None:
    st.success(f"Training on {ui.literal(uploaded.name)}: {uploaded.note}", icon=":material/upload_file:")
shown = ui.shown_controls("pg_", SPECS)  # in the sidebar: what students see
compare = {COMPARE: "1"} if st.session_state.pg_compare else {}
page_link = link(settings, uploaded is not None, run.edits) | compare | lesson_link | challenge_link | shown
st.query_params.from_dict(page_link | ui.switches_query())
ui.share_link(page_link)


# --- controls ----------------------------------------------------------------------------------
stream = plane_stream()  # what the plane's own requests for frames train and draw (pages/serving/frames.py)


def play(on: bool) -> None:
    # Idempotent on purpose: a click that reaches the server twice must not undo itself.
    if not on:
        panels.stop_playing()
    st.session_state.pg_playing = on and not st.session_state.pg_run.trainer.finished


# The frame the page shows, and whether the plane goes on fetching: a frame may just have ended the run.
now = stream.update(
    run, st.session_state.pg_speed, st.session_state.pg_playing, st.session_state.get(panels.FOCUS_KEY)
)
st.session_state.pg_playing = playing = stream.playing
steady(playing)
panels.controls_bar(playing, play)  # TensorFlow Playground's bar, on top: Space plays, S steps


# --- the live part: the plane fetches its own frames; the panels redraw about once a second -------
def plane_and_numbers() -> None:
    """The numbers, what the page must say about the run, and the plane."""
    if banner := run.view.banner():
        icons = {"error": ":material/warning:", "warning": ":material/heart_broken:", "info": None}
        getattr(st, banner[0])(banner[1], icon=icons[banner[0]])
    points = plane_points(run.points, st.session_state.pg_show_test)
    tool = touch.touch_state(run, uploaded is not None)  # the legend's classes choose what a click adds
    probe = st.session_state.get(panels.PROBE_KEY)  # with a unit on the plane: the point it is asked at
    ui.plane(
        stream,
        now,
        points,
        ui.presenter(),
        ui.debug_mode(),
        on_click=panels.plane_click,
        touch=tool,
        on_touch=touch.choose,
        probe=probe,
    )
    panels.view_toggles()  # under the plane, as in TensorFlow Playground
    if failure := stream.take_failure():
        st.error(failure, icon=":material/error:")
    if ui.debug_mode():
        st.caption(f"{stream.rate.text()}; {ui.collection_text()}")
    units.unit_on_plane(run)  # a unit on the plane: its computation at the point clicked


# In the first screen, TensorFlow Playground's way: the plane beside the network and the curves.
# The plane comes first, so that a phone, which stacks the columns, shows it first.
PANEL_HEIGHT = 250 if ui.presenter() else 280  # the curves under the network, in a 720 px screen


heartbeat(playing, stream.beat)  # the tab is open: its frames may go on (pages/serving/frames.py)


@live(PANEL_SECONDS, playing, slow=True)
def network_and_curves() -> None:
    stream.renew()  # the tab is open: its frames may go on (pages/serving/frames.py)
    run = st.session_state.pg_run
    with st.container(key="pg_network"):
        picture = units.network_view(run)  # click a unit: on the plane; an edge: its weight
        units.weight_editor(run)
    with st.container(key="pg_curves"):
        train = train_curve_name(run.settings)  # with L1 or L2 on, the train loss includes the penalty
        regress = run.points.task == "regress"  # MSE and R², no confusion matrix, no challenge scores
        curves = run.view.curves(), run.view.twin_curves()
        figure = epoch_curves_figure(*curves, height=PANEL_HEIGHT, train=train, regress=regress)
        ui.chart(figure, key="pg_curves_chart")
        if challenge is not None and regress:
            st.caption("Challenges score a classifier's accuracy: pick a classification data set.")
        elif challenge is not None:  # checked live, against what the run has reached so far
            scores = playground_scores(run.trainer.history)
            # scored at each epoch that could be the best, on the hidden part of the visitor's room
            run.watch_hidden(*hidden_points(run.settings, room_seed(challenge)))
            hidden = functools.partial(hidden_score, run, challenge)  # posted to a class board too
            own = not run.edits and run.data_key == run.settings.data_key  # no upload, no points by hand
            query = link(run.settings) | challenge_link
            ui.challenge_status("pg_", challenge, run.settings, scores, query, hidden, own, run.altered)
        if (gap := run.view.engine_gap()) is not None:
            st.caption(
                f"Engines side by side over {gap['epochs']:,} epochs: largest |Δ train loss| = "
                f"{gap['loss']:.1e}, largest |Δ weight| = {gap['weights']:.1e} (float32 rounding)."
            )
    if not regress:  # a regression has no classes to confuse
        confusion, _ = st.columns([1, 1])
        with confusion:
            st.caption("Confusion matrix on the test points")
            ui.chart(confusion_figure(run.view.confusion("test")), key="pg_confusion")
    panels.unit_panel(run, picture)


left, right = st.columns([5, 6], gap="medium")
with left:
    plane_and_numbers()
with right:
    network_and_curves()
panels.compare_panel(run, settings.dropout)
panels.export_panel(run, uploaded is not None, ui.page_url(page_link))
