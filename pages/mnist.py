"""MNIST: train an MLP on real digits (GPU when there is one), watch it learn, look inside, try it."""

import os

import pandas as pd
import streamlit as st

from mlp.device import DEVICES, available_devices, pick_device
from mlp.digits import canvas_to_gray, image_to_gray, to_mnist
from mlp.io import architecture_json, model_from_bytes, model_to_bytes
from mlp.mnist import MnistData, load_mnist
from mlp.mnist_run import MnistRun
from mlp.model import ACTIVATIONS, INITS, ModelConfig
from mlp.plots2d import confusion_figure, neurons_figure
from mlp.plots_mnist import compare_figure, digit_grid, live_curves_figure, lr_figure, probability_bars
from mlp.train import OPTIMIZERS, SCHEDULERS, TrainConfig
from mlp.walkthrough import parse_widths
from pages import digit_pad, require_shell

require_shell()

FRAME_SECONDS = 0.4  # training time per frame; Stop lands within one
CHART = {"displayModeBar": False}
LRS = [1e-4, 3e-4, 1e-3, 2e-3, 3e-3, 0.01, 0.03, 0.1, 0.3]
BATCHES = [16, 32, 64, 128, 256, 512, 1024]
DECAYS = [0.0, 1e-5, 1e-4, 1e-3, 1e-2]


def seconds_text(seconds: float) -> str:
    return (
        f"{seconds * 1000:.0f} ms"
        if seconds < 1
        else f"{seconds:.1f} s"
        if seconds < 60
        else f"{seconds / 60:.1f} min"
    )


def show_guess(run: MnistRun, digit, caption: str, key: str) -> None:
    """The 28×28 digit the network is shown, and its probability for each class."""
    st.image(digit, width=84, caption=caption)
    st.plotly_chart(probability_bars(run.predict(digit)), config=CHART, key=key)


@st.cache_resource(show_spinner="Loading the digits…")
def dataset() -> MnistData:
    """Loaded once per server process and shared, read-only: uint8 pixels, a few MB to 55 MB."""
    return load_mnist(download=os.environ.get("MLP_PLAYGROUND_DOWNLOAD") == "1", timeout=10)


st.title("MNIST")
st.caption("Train a multilayer perceptron on handwritten digits, watch it learn, and look inside it.")
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
    choices = [d for d in DEVICES if d == "auto" or d in available_devices()]
    device_choice = st.selectbox(
        "Train on", choices, key="mn_device", help="auto: CUDA, then Apple MPS, then CPU."
    )
    info = pick_device(device_choice)
    st.caption(info.describe())
    st.subheader("Network")
    hidden_text = st.text_input(
        "Hidden widths", "128", key="mn_hidden", help="Up to 4 layers, e.g. 128 or 256, 128."
    )
    try:
        hidden = parse_widths(hidden_text, max_layers=4, max_width=2048) if hidden_text.strip() else []
    except ValueError as err:
        st.error(f"{err} Using 128.")
        hidden = [128]
    activation = st.selectbox("Activation", ACTIVATIONS, key="mn_activation")
    init = st.selectbox("Initialisation", INITS, key="mn_init")
    dropout = st.slider("Dropout", 0.0, 0.8, 0.0, 0.05, key="mn_dropout")
    st.subheader("Training")
    optimizer = st.selectbox("Optimizer", OPTIMIZERS, index=OPTIMIZERS.index("adam"), key="mn_optimizer")
    lr = st.select_slider("Learning rate", LRS, value=1e-3, key="mn_lr", format_func=lambda v: f"{v:g}")
    batch = st.select_slider("Batch size", BATCHES, value=128, key="mn_batch")
    epochs = st.number_input("Epochs", 1, 100, 5, key="mn_epochs")
    decay = st.select_slider(
        "Weight decay", DECAYS, value=0.0, key="mn_decay", format_func=lambda v: f"{v:g}"
    )
    scheduler = st.selectbox("Learning-rate schedule", SCHEDULERS, key="mn_scheduler")
    warmup = st.number_input("Warmup epochs", 0.0, 10.0, 0.0, 0.5, key="mn_warmup")
    clip = st.number_input("Gradient clipping (max norm, 0 = off)", 0.0, 100.0, 0.0, 0.5, key="mn_clip")
    seed = st.number_input("Seed", 0, 2**31 - 1, 0, key="mn_seed")
    amp = compile_ = False
    if info.kind == "cuda":
        amp = st.toggle("bf16 autocast", key="mn_amp", help="Matmuls in bfloat16; weights stay float32.")
        compile_ = st.toggle(
            "CUDA graphs (torch.compile)",
            key="mn_compile",
            help="Compiles for a while, then each step is one launch.",
        )

# --- start and stop ------------------------------------------------------------------------------
st.session_state.setdefault("mn_running", False)
st.session_state.setdefault("mn_runs", [])


def start() -> None:
    try:
        model_cfg = ModelConfig(784, hidden, 10, activation, init, dropout)
        train_cfg = TrainConfig(
            optimizer=optimizer,
            lr=lr,
            batch_size=batch,
            epochs=int(epochs),
            weight_decay=decay,
            scheduler=scheduler,
            warmup_epochs=warmup,
            grad_clip=clip,
            seed=int(seed),
            device=device_choice,
            amp=amp,
            compile=compile_,
        )
        name = f"run {len(st.session_state.mn_runs) + 1}"
        st.session_state.mn_run = MnistRun(dataset(), model_cfg, train_cfg, name)
        st.session_state.mn_running = True
    except (ValueError, RuntimeError) as err:  # e.g. out of GPU memory, or a bad combination
        st.session_state.mn_error = str(err)


def stop() -> None:
    run = st.session_state.get("mn_run")
    if run is not None and st.session_state.mn_running:
        run.stop()
        finish(run)


def finish(run: MnistRun) -> None:
    st.session_state.mn_running = False
    run.evaluate()
    st.session_state.mn_runs.append(run.summary())


running = st.session_state.mn_running
left, right, _ = st.columns([1.3, 1.3, 3.4])
left.button(
    "Start", icon=":material/play_arrow:", type="primary", key="mn_start", on_click=start, disabled=running
)
right.button("Stop", icon=":material/stop:", key="mn_stop", on_click=stop, disabled=not running)
if error := st.session_state.pop("mn_error", None):
    st.error(f"Training could not start: {error}")


@st.fragment(run_every=0.05 if running else None)
def live() -> None:
    run: MnistRun | None = st.session_state.get("mn_run")
    if run is None:
        st.info("Choose a network and training settings in the sidebar, then press **Start**.")
        return
    t = run.trainer
    reports, epochs_done = t.history.reports, t.history.epochs
    rate = reports[-1].samples_per_sec if reports else 0.0
    st.progress(
        min(1.0, t.step_count / max(1, t.total_steps)),
        text=f"{run.name}: {t.status} · step {t.step_count:,} of {t.total_steps:,}",
    )
    cols = st.columns(5)
    cols[0].metric("Epoch", f"{t.epoch_progress:.2f} / {run.train_cfg.epochs}")
    cols[1].metric("Samples / s", f"{rate:,.0f}")
    cols[2].metric("Epoch time", seconds_text(epochs_done[-1].seconds) if epochs_done else "–")
    cols[3].metric("ETA", seconds_text(reports[-1].eta) if reports and not run.finished else "–")
    val = [e.val_acc for e in epochs_done if e.val_acc is not None]
    cols[4].metric("Validation accuracy", f"{val[-1]:.2%}" if val else "–")
    if t.status == "diverged":
        st.error(t.message)
    st.plotly_chart(live_curves_figure(run.live_curves()), config=CHART, key="mn_curves")
    with st.expander("Learning-rate schedule"):
        st.plotly_chart(lr_figure(*run.lr_schedule(), t.epoch_progress), config=CHART, key="mn_lr_plot")
    # Train after drawing: the page shows this frame's state while the next one trains.
    if st.session_state.mn_running:
        run.advance(FRAME_SECONDS)
        if run.finished:
            finish(run)
            st.rerun()  # the whole page: evaluation, and the timer off


live()
run: MnistRun | None = st.session_state.get("mn_run")

# --- evaluate, try, keep, compare ------------------------------------------------------------------
evaluate_tab, try_tab, keep_tab, compare_tab = st.tabs(["Evaluate", "Try it", "Keep it", "Compare runs"])
ready = run is not None and run.finished

with evaluate_tab:
    if not ready:
        st.info("The evaluation appears here when training ends (or is stopped).")
    else:
        ev = run.evaluate()
        a, b = st.columns(2)
        a.metric(
            "Test accuracy",
            f"{ev.accuracy:.2%}",
            help=f"On {data.n_test:,} digits the network never trained on.",
        )
        b.metric("Test loss", f"{ev.loss:.4f}")
        left, right = st.columns(2)
        with left:
            st.markdown("**Confusion matrix** (true digit down, prediction across)")
            st.plotly_chart(confusion_figure(ev.confusion, height=420), config=CHART, key="mn_confusion")
        with right:
            st.markdown("**Per digit**")
            st.dataframe(
                pd.DataFrame(ev.per_class).style.format(
                    {"precision": "{:.1%}", "recall": "{:.1%}", "f1": "{:.3f}"}
                ),
                hide_index=True,
                width="stretch",
            )
        st.markdown("**Mistakes it was surest about**: true digit → top three guesses")
        mistakes = ev.mistakes(data.y_test, limit=16)
        st.image(
            [data.x_test[m["index"]] for m in mistakes],
            caption=[f"{m['true']} → " + " · ".join(f"{c}: {p:.0%}" for c, p in m["top3"]) for m in mistakes],
            width=112,
        )
        st.markdown("**First-layer weights**: what each hidden unit looks for (orange adds, blue subtracts)")
        st.plotly_chart(
            neurons_figure(run.first_layer_weights(64), per_row=16, pixels=3, bottom_up=False),
            config=CHART,
            key="mn_weights",
            width="content",
        )

with try_tab:
    if run is None:
        st.info("Train a model first, or load one in *Keep it*.")
    else:
        pick, draw, upload_col = st.columns(3, gap="large")
        with pick:
            st.markdown("**A test digit**")
            index = st.number_input("Test digit number", 0, data.n_test - 1, 0, key="mn_pick")
            st.image(data.x_test[index], width=140, caption=f"labelled {data.y_test[index]}")
            st.plotly_chart(
                probability_bars(run.predict(data.x_test[index])), config=CHART, key="mn_pick_bars"
            )
        with draw:
            st.markdown("**Draw one**")
            ink, side = digit_pad("mn_pad")
            if ink is not None:
                try:
                    show_guess(
                        run,
                        to_mnist(canvas_to_gray(ink, side)),
                        "what the network sees (28×28)",
                        "mn_draw_bars",
                    )
                except ValueError as err:
                    st.warning(str(err))
        with upload_col:
            st.markdown("**Upload a photo**")
            image_file = st.file_uploader("An image of one digit", key="mn_image")
            if image_file is not None:
                try:
                    show_guess(
                        run,
                        to_mnist(image_to_gray(image_file.getvalue())),
                        "centred and scaled like MNIST",
                        "mn_upload_bars",
                    )
                except ValueError as err:
                    st.error(str(err))

with keep_tab:
    if ready:
        info_extra = {"test_accuracy": run.evaluation.accuracy if run.evaluation else None}
        a, b = st.columns(2)
        a.download_button(
            "Weights (.safetensors)",
            data=lambda: model_to_bytes(run.model, **info_extra),
            file_name="mnist-mlp.safetensors",
            on_click="ignore",
            icon=":material/download:",
        )
        b.download_button(
            "Architecture (.json)",
            data=lambda: architecture_json(run.model, **info_extra),
            file_name="mnist-mlp.json",
            mime="application/json",
            on_click="ignore",
        )
    model_file = st.file_uploader("Load a model saved here (.safetensors)", key="mn_model_file")
    if model_file is not None and st.session_state.get("mn_loaded_id") != model_file.file_id:
        try:
            model, _ = model_from_bytes(model_file.getvalue(), expect_d_in=784, expect_d_out=10)
            st.session_state.mn_run = loaded = MnistRun.from_model(data, model, model_file.name)
            st.session_state.mn_running = False
            st.session_state.mn_loaded_id = model_file.file_id
            loaded.evaluate()
            st.session_state.mn_runs.append(loaded.summary())
            st.rerun()
        except ValueError as err:
            st.error(f"Not loaded: {err}")

with compare_tab:
    runs = st.session_state.mn_runs
    if not runs:
        st.info("Every finished run of this session lands here, to compare settings and results.")
    else:
        table = pd.DataFrame([r.row() for r in runs])
        st.dataframe(table, hide_index=True, width="stretch")
        st.plotly_chart(compare_figure(runs), config=CHART, key="mn_compare")
