"""MNIST: train an MLP on real digits (GPU when there is one), watch it learn, look inside, try it."""

import time

import streamlit as st

import pages.ui as ui
from mlp.curriculum.challenges import Score
from mlp.data import MnistData
from mlp.device import device_choices, pick_device
from mlp.figures.curves import live_curves_figure, lr_figure
from mlp.lessons.mnist import CUDA_ONLY, DEVICE, SPECS, from_query, from_widgets, to_query
from mlp.runs.mnist import MnistSession
from mlp.spec import NETWORK, TRAINING
from mlp.train import describe_schedule
from pages.serving.jobs import shared_executor
from pages.serving.live import steady
from pages.ui import mnist as views
from pages.ui.mnist import dataset

ui.require_shell()

# While a run trains, every redraw costs the browser's main thread (here, 2 cores shared with
# training: ~65 ms for the progress bar, ~0.5 s for the curves), so the page draws sparingly
# and listens for clicks in between (ui.wait_heeding_clicks: Stop is heard within 0.1 s).
# bench/browser_mnist.py: with the bar redrawn every 0.5 s the page delivered 77% of the
# engine's speed on the sample; every 1 s, 82%.
PROGRESS_SECONDS = 1.0  # the progress bar
NUMBERS_SECONDS = 2.0  # the counters
CURVES_SECONDS = 5.0  # the curves
# When a run ends its result (test accuracy, "done") is drawn first and given this long to reach
# the screen before the whole page follows: the browser would otherwise paint both together,
# after the evaluation's charts (~0.4 s later).
RESULT_SECONDS = 0.2
COLUMNS = ("epoch", "train_loss", "train_acc", "val_loss", "val_acc")
EMPTY_CURVES = {part: dict.fromkeys(COLUMNS, ()) for part in ("train", "val")}  # axes, before a run


def digits(challenge: bool, seed: int | None = None) -> MnistData:
    """The page's digits: with a challenge chosen, without the test digits it keeps hidden (in a
    class room, the ones its secret chose: `seed`)."""
    return dataset().challenge_part(seed) if challenge else dataset()


def load(query) -> None:
    """Fill the sidebar from a link's query: a lesson's or a challenge's network and training."""
    ui.load_settings("mn_", SPECS, from_query(ui.settings_query(query))[0])


saved, notes = ui.page_settings("mn_", SPECS, lambda: from_query(ui.link_query()))
session: MnistSession = st.session_state.setdefault("mn_session", MnistSession())
session.sync()  # a run that ended while nothing followed it (e.g. stopped by this rerun's click)
ui.page_header(
    "MNIST", "Train a multilayer perceptron on handwritten digits, watch it learn, and look inside it."
)
ui.show_link_notes(notes)
lesson_link = ui.lesson_panel("mn_", "mnist", load)
challenge, challenge_link = ui.challenge_picker("mn_", "mnist", load)
# A challenge keeps part of the test digits hidden (for a class board's final ranking): its runs
# train, show and are checked on the rest. Start (a callback) reads what this run chose.
seed = ui.room_seed(challenge) if challenge is not None else None  # in a class room: the room's part
st.session_state.mn_challenge_data = (challenge is not None, seed)
data = digits(challenge is not None, seed)
views.data_banner(data, dataset.clear)
if not ui.presenter():  # a secondary panel: the run comes first on a projector
    with st.expander("Example digits, ten of each class"):
        st.image(views.examples(data, data.source, data.n_train), width=420, clamp=True, alt="Example digits")

# --- settings (sidebar) ------------------------------------------------------------------------
with st.sidebar:
    st.subheader(DEVICE)
    ui.control("mn_", SPECS, "device", options=device_choices())
    info = pick_device(st.session_state.mn_device)
    st.caption(info.describe())
    for heading in (NETWORK, TRAINING):
        st.subheader(heading)
        ui.controls("mn_", SPECS, heading, skip=() if info.kind == "cuda" else CUDA_ONLY)

widgets = {name: st.session_state.get(f"mn_{name}") for name in SPECS}
settings, problems = from_widgets(widgets, saved, info.kind)
st.session_state.mn_settings = settings
for problem in problems:
    st.sidebar.error(f"{ui.say(problem)} Keeping the previous value.")
st.sidebar.caption(describe_schedule(settings.train_config()))
st.sidebar.caption(settings.describe_steps(info.device))
page_link = to_query(settings) | lesson_link | challenge_link
st.query_params.from_dict(page_link | ui.switches_query())
ui.share_link(page_link)


# --- the run: Start, Stop, what it shows, the tabs under it ----------------------------------------
# Every widget here reruns the whole page, which ends the loop at the end of the script at once
# (a click inside an st.fragment would wait for a running script to end). The loop comes last,
# drawing into boxes placed higher up, so the rest of the page is drawn before it starts.
def start() -> None:
    try:
        # A closed tab's run stops once its session would be dropped (Streamlit keeps it that
        # long for a visitor who reconnects), even on a server that never gets round to it.
        keepalive = float(st.get_option("server.disconnectedSessionTTL"))
        data = digits(*st.session_state.get("mn_challenge_data", (False, None)))  # as the page showed them
        session.start(data, st.session_state.mn_settings, shared_executor(), keepalive)
    except (ValueError, RuntimeError) as err:  # e.g. out of GPU memory, or a bad combination
        st.session_state.mn_error = ui.say(err)


def numbers(box, view) -> None:
    """The run's counters (each redraw costs the browser a little: about once a second)."""
    with box.container():
        # The same children every time: a redraw replaces them in place. A banner that went
        # (a queued run now running) would otherwise leave the first redraw's numbers under the
        # new ones until the script run ends, which a training run's doesn't for minutes.
        note = st.empty()
        if banner := session.banner():
            getattr(note, banner[0])(banner[1])
        row = st.container(horizontal=True)  # wraps on a phone: two a row
        for label, value in view.metrics:
            row.metric(label, value, width=150)
        if ui.debug_mode() and session.job is not None:
            st.caption(f"Job: {session.job.timing()}, {view.elapsed:.2f} s busy. {ui.collection_text()}.")


def show(view, parts: tuple[str, ...] = ("progress", "numbers", "curves")) -> None:
    """Draw the run's view into its boxes: all of it, or the parts that are due."""
    if "progress" in parts:
        steps = f"step {view.step:,} of {view.total_steps:,}"
        progress.progress(view.fraction, text=f"{ui.literal(view.name)} {view.status} · {steps}")
    if "numbers" in parts:
        numbers(counters, view)
    if "curves" in parts:
        figure = live_curves_figure(**view.curves)
        # The same figure twice in one script run is the same element twice, which Streamlit
        # refuses: a queued run's curves, or a run's between two epochs, are drawn once.
        if (drawn := figure.to_json()) != shown.get("curves"):
            ui.chart(figure, curves)
            shown["curves"] = drawn


left = right = st.container(horizontal=True)  # side by side, on a phone too
running = session.running
steady(running)  # while it trains: no fades between redraws, no running animation
left.button(
    "Start", icon=":material/play_arrow:", type="primary", key="mn_start", on_click=start, disabled=running
)
right.button("Stop", icon=":material/stop:", key="mn_stop", on_click=session.stop, disabled=not running)
if error := st.session_state.pop("mn_error", None):
    st.error(f"Training could not start: {error}")
if challenge is not None:  # checked against the last run this page trained on its digits (not a file)
    done = session.run if session.run is not None and not session.run.loaded and not running else None
    if done is not None and done.data.hidden is None:  # trained before the challenge was chosen
        st.caption(
            f"Your last run was tested on all {done.data.n_test:,} test digits; a challenge keeps "
            f"{len(data.hidden[1]):,} of them hidden. Press Start to train for the challenge."
        )
        done = None
    elif done is not None and done.data.part_seed != data.part_seed:  # before joining a room, or another
        st.caption(
            "Your last run was tested on other digits than your class room's challenge keeps: "
            "press Start to train for it."
        )
        done = None
    scores = [Score(done.trainer.epoch, done.evaluate().accuracy, done.evaluate().loss)] if done else []
    ran = done.settings if done else settings
    hidden = (lambda epoch: done.hidden_accuracy()) if done else None  # its one score: the finished run's
    ui.challenge_status("mn_", challenge, ran, scores, to_query(ran) | challenge_link, hidden)
progress, counters = st.empty(), st.empty()
curves = st.container(key="mn_curves").empty()  # keyed: a tour can point at it
shown: dict[str, str] = {}  # what this script run drew, as plotly JSON
if (view := session.view()) is None:
    progress.info("Choose a network and training settings in the sidebar, then press **Start**.")
    ui.chart(live_curves_figure(**EMPTY_CURVES), curves)  # where the curves will go
elif view.loaded:  # a model trained elsewhere: what it is, no progress or curves it never had
    progress.info(f"Loaded from {ui.literal(view.name)}: {view.loaded}", icon=":material/upload_file:")
else:
    show(view)  # first: the browser paints in order, and the tabs below can take a while
    with st.expander("Learning-rate schedule", key="mn_lr_open", on_change="rerun") as schedule:
        if schedule.open:  # drawn only when open: a chart costs the browser a lot
            ui.chart(lr_figure(*view.schedule, view.epoch))
views.tabs(session, session.run.data if session.run is not None else data)  # what the run was scored on

# While it trains: redraw what is due as the views come, hear clicks in between.
due = dict.fromkeys(("progress", "numbers", "curves"), time.monotonic())
every = {"progress": PROGRESS_SECONDS, "numbers": NUMBERS_SECONDS, "curves": CURVES_SECONDS}
while running:
    ui.wait_heeding_clicks(session.job.wait, PROGRESS_SECONDS, "mn_session")  # or until it ends
    if session.sync():  # it ended: the result first (the test accuracy), then the whole page
        show(session.view(), ("progress", "numbers"))
        time.sleep(RESULT_SECONDS)
        st.rerun()
    now = time.monotonic()
    parts = tuple(part for part in due if now - due[part] >= every[part] - 0.05)
    show(session.view(), parts)
    due |= dict.fromkeys(parts, now)
