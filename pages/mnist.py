"""MNIST: train an MLP on real digits (GPU when there is one), watch it learn, look inside, try it."""

import pandas as pd
import streamlit as st

import pages.ui as ui
from mlp.data import MnistData, load_mnist
from mlp.data.digits import digit_from_canvas, digit_from_image
from mlp.data.mnist import for_server
from mlp.device import device_choices, pick_device
from mlp.figures.classes import confusion_figure, digit_grid, probability_bars
from mlp.figures.curves import compare_figure, live_curves_figure, lr_figure
from mlp.figures.plane import neurons_image
from mlp.lessons.mnist import SPECS, WIDTHS, MnistSession, from_query, from_widgets
from mlp.lessons.mnist_run import first_layer_weights, predict
from mlp.model import ACTIVATIONS, INITS
from mlp.train import OPTIMIZERS, SCHEDULERS, describe_schedule
from mlp.train.jobs import shared_executor

ui.require_shell()

POLL_SECONDS = 0.25  # how often a training run's page looks at its latest view
CHART = {"displayModeBar": False}


def show_guess(model, digit, caption: str, key: str) -> None:
    """The 28×28 digit the network is shown, and its probability for each class."""
    st.image(digit, width=84, caption=caption)
    st.plotly_chart(probability_bars(predict(model, digit)), config=CHART, key=key)


@st.cache_resource(show_spinner="Loading the digits…")
def dataset() -> MnistData:
    """Loaded once per server process and shared, read-only: uint8 pixels, a few MB to 55 MB."""
    return for_server()


saved, notes = ui.page_settings("mn_", SPECS, lambda: from_query(ui.link_query()))
session: MnistSession = st.session_state.setdefault("mn_session", MnistSession())
st.title("MNIST")
st.caption("Train a multilayer perceptron on handwritten digits, watch it learn, and look inside it.")
ui.show_link_notes(notes)
data = dataset()

# --- where the data comes from ------------------------------------------------------------------
if data.source == "mnist":
    st.success(data.note, icon=":material/dataset:")
else:
    st.info(data.note, icon=":material/cloud_off:")
    if st.button("Download the full MNIST (11 MB, once)", key="mn_download", icon=":material/download:"):
        bar = st.progress(0.0, text="Downloading…")

        def progress(name: str, done: int, total: int | None) -> None:
            bar.progress(min(1.0, done / total) if total else 0.0, text=f"{name}: {done / 1e6:.1f} MB")

        full = load_mnist(progress=progress, retries=1, timeout=10)
        if full.source == "mnist":
            dataset.clear()
            st.rerun()
        bar.empty()
        st.error(f"The download did not work, so the sample stays. {full.note}")

with st.expander("Example digits, ten of each class"):
    examples = [data.x_train[data.y_train == d][:10] for d in range(10)]
    st.image(digit_grid([image for row in examples for image in row]), width=420, clamp=True)

# --- settings (sidebar) ------------------------------------------------------------------------
with st.sidebar:
    st.subheader("Device")
    st.selectbox("Train on", device_choices(), key="mn_device", help="auto: CUDA, then Apple MPS, then CPU.")
    info = pick_device(st.session_state.mn_device)
    st.caption(info.describe())
    st.subheader("Network")
    st.text_input("Hidden widths", key="mn_hidden", help=WIDTHS.help)
    st.selectbox("Activation", ACTIVATIONS, key="mn_activation")
    st.selectbox("Initialisation", INITS, key="mn_init")
    ui.slider("Dropout", SPECS["dropout"], "mn_dropout")
    st.subheader("Training")
    st.selectbox("Optimizer", OPTIMIZERS, key="mn_optimizer")
    ui.stops("Learning rate", SPECS["lr"], "mn_lr")
    ui.stops("Batch size", SPECS["batch_size"], "mn_batch_size", str)
    ui.number("Epochs", SPECS["epochs"], "mn_epochs")
    ui.stops("Weight decay", SPECS["weight_decay"], "mn_weight_decay")
    st.selectbox("Learning-rate schedule", SCHEDULERS, key="mn_scheduler")
    ui.number("Warmup epochs", SPECS["warmup_epochs"], "mn_warmup_epochs")
    ui.number("Gradient clipping (max norm, 0 = off)", SPECS["grad_clip"], "mn_grad_clip")
    ui.number("Seed", SPECS["seed"], "mn_seed")
    if info.kind == "cuda":
        st.toggle("bf16 autocast", key="mn_amp", help="Matmuls in bfloat16; weights stay float32.")
        st.toggle(
            "CUDA graphs (torch.compile)",
            key="mn_compile",
            help="Compiles for a while, then one launch a step.",
        )

settings, problems = from_widgets(
    {name: st.session_state.get(f"mn_{name}") for name in SPECS}, saved, info.kind
)
st.session_state.mn_settings = settings
for problem in problems:
    st.sidebar.error(f"{ui.say(problem)} Keeping the previous value.")
st.sidebar.caption(describe_schedule(settings.train_config()))


# --- start and stop ------------------------------------------------------------------------------
def start() -> None:
    try:
        session.start(dataset(), st.session_state.mn_settings, shared_executor())
    except (ValueError, RuntimeError) as err:  # e.g. out of GPU memory, or a bad combination
        st.session_state.mn_error = ui.say(err)


left, right, _ = st.columns([1.3, 1.3, 3.4])
running = session.running
left.button(
    "Start", icon=":material/play_arrow:", type="primary", key="mn_start", on_click=start, disabled=running
)
right.button("Stop", icon=":material/stop:", key="mn_stop", on_click=session.stop, disabled=not running)
if error := st.session_state.pop("mn_error", None):
    st.error(f"Training could not start: {error}")


@st.fragment(run_every=POLL_SECONDS if running else None)
def live() -> None:
    """Draws the run's latest view; the training itself happens on the executor's worker."""
    if session.sync():
        st.rerun()  # the run just ended: the whole page, for the evaluation and the timer off
    view = session.view()
    if view is None:
        st.info("Choose a network and training settings in the sidebar, then press **Start**.")
        return
    st.progress(
        view.fraction,
        text=f"{ui.literal(view.name)} {view.status} · step {view.step:,} of {view.total_steps:,}",
    )
    if banner := session.banner():
        getattr(st, banner[0])(banner[1])
    for col, (label, value) in zip(st.columns(5), view.metrics, strict=True):
        col.metric(label, value)
    st.plotly_chart(live_curves_figure(**view.curves), config=CHART, key="mn_curves")
    with st.expander("Learning-rate schedule"):
        st.plotly_chart(lr_figure(*view.schedule, view.epoch), config=CHART, key="mn_lr_plot")


live()
run, view = session.run, session.view()

# --- evaluate, try, keep, compare ------------------------------------------------------------------
evaluate_tab, try_tab, keep_tab, compare_tab = st.tabs(["Evaluate", "Try it", "Keep it", "Compare runs"])
with evaluate_tab:
    if not session.ready:
        st.info("The evaluation appears here when training ends (or is stopped).")
    else:
        ev = view.evaluation
        a, b = st.columns(2)
        a.metric(
            "Test accuracy", f"{ev.accuracy:.2%}", help=f"On {data.n_test:,} digits it never trained on."
        )
        b.metric("Test loss", f"{ev.loss:.4f}")
        left, right = st.columns(2)
        with left:
            st.markdown("**Confusion matrix** (true digit down, prediction across)")
            st.plotly_chart(confusion_figure(ev.confusion, height=420), config=CHART, key="mn_confusion")
        with right:
            st.markdown("**Per digit**")
            scores = pd.DataFrame(ev.per_class).style.format(
                {"precision": "{:.1%}", "recall": "{:.1%}", "f1": "{:.3f}"}
            )
            st.dataframe(scores, hide_index=True, width="stretch", key="mn_per_digit")
        st.markdown("**Mistakes it was surest about**: true digit → top three guesses")
        mistakes = ev.mistakes(data.y_test, limit=16)
        captions = [f"{m['true']} → " + " · ".join(f"{c}: {p:.0%}" for c, p in m["top3"]) for m in mistakes]
        st.image([data.x_test[m["index"]] for m in mistakes], caption=captions, width=112)
        st.markdown("**First-layer weights**: what each hidden unit looks for (orange adds, blue subtracts)")
        st.image(neurons_image(first_layer_weights(view.weights), per_row=16, pixels=3, bottom_up=False))

with try_tab:
    model = session.predictor()
    if model is None:
        st.info("Train a model (its weights show up here after each epoch), or load one in *Keep it*.")
    else:
        pick, draw, upload_col = st.columns(3, gap="large")
        with pick:
            st.markdown("**A test digit**")
            index = st.number_input("Test digit number", 0, data.n_test - 1, 0, key="mn_pick")
            show_guess(model, data.x_test[index], f"labelled {data.y_test[index]}", "mn_pick_bars")
        with draw:
            st.markdown("**Draw one**")
            ink, side = ui.digit_pad("mn_pad")
            try:
                if ink is not None:
                    show_guess(model, digit_from_canvas(ink, side), "what the network sees", "mn_draw_bars")
            except ValueError as err:
                st.warning(ui.say(err))
        with upload_col:
            st.markdown("**Upload a photo**")
            image_file = st.file_uploader("An image of one digit", key="mn_image")
            try:
                if image_file is not None:
                    digit = digit_from_image(image_file.getvalue())
                    show_guess(model, digit, "centred and scaled like MNIST", "mn_upload_bars")
            except ValueError as err:
                st.error(ui.say(err))

with keep_tab:
    if session.ready:
        for col, (label, make, name) in zip(st.columns(2), run.downloads(), strict=True):
            col.download_button(
                label, data=make, file_name=name, on_click="ignore", icon=":material/download:"
            )
    model_file = st.file_uploader("Load a model saved here (.safetensors)", key="mn_model_file")
    if model_file is not None and session.loaded_file != model_file.file_id:
        try:
            session.load(data, model_file.getvalue(), model_file.name, model_file.file_id)
            st.rerun()
        except ValueError as err:
            st.error(f"Not loaded: {ui.say(err)}")

with compare_tab:
    if not session.runs:
        st.info("Every finished run of this session lands here, to compare settings and results.")
    else:
        table = pd.DataFrame([r.row() for r in session.runs])
        st.dataframe(table, hide_index=True, width="stretch", key="mn_runs")
        st.plotly_chart(compare_figure(session.runs), config=CHART, key="mn_compare")
