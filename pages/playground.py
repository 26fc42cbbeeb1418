"""2D playground: train a small network live on toy data and watch its decision boundary."""

from dataclasses import asdict

import streamlit as st

from mlp.data import KINDS, MULTICLASS_KINDS
from mlp.io import architecture_json, model_to_bytes
from mlp.model import ACTIVATIONS, INITS
from mlp.playground import (
    DATA_FIELDS,
    PRESETS,
    Playground,
    Settings,
    from_query,
    make_points,
    points_csv,
    read_points_csv,
    to_query,
    uploaded_points,
)
from mlp.plots2d import boundary_figure, confusion_figure, curves_figure, neurons_figure
from mlp.train import OPTIMIZERS, SCHEDULERS
from mlp.walkthrough import parse_widths
from pages import require_shell

require_shell()

FRAME_SECONDS = 0.15
CHART = {"displayModeBar": False}
LRS = [1e-4, 3e-4, 1e-3, 3e-3, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0]
BATCHES = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 0]  # 0 = the whole training set
DECAYS = [0.0, 1e-5, 1e-4, 1e-3, 1e-2, 0.1]
CLIPS = [0.0, 0.1, 0.5, 1.0, 5.0]
SPEEDS = [1, 2, 5, 10, 20, 50, 100, 200]


def options(values: list, current, zero_last: bool = False) -> list:
    """The slider's stops, plus the current value if a link brought one in between."""
    return sorted({*values, current}, key=lambda v: float("inf") if zero_last and v == 0 else v)


def widget_state(settings: Settings) -> dict:
    """Widget values for a Settings: what a link or a preset writes into the sidebar."""
    state = {f"pg_{name}": value for name, value in asdict(settings).items()}
    state["pg_hidden"] = ", ".join(str(w) for w in settings.hidden)
    return state


def load(settings: Settings) -> None:
    st.session_state.update(widget_state(settings))
    st.session_state.pg_playing = False


def apply_preset() -> None:
    load(PRESETS[st.session_state.pg_preset])


# --- first visit: the link's settings, or the default preset ------------------------------------
if "pg_seed" not in st.session_state:
    linked, warnings = from_query(st.query_params.to_dict()) if st.query_params else (PRESETS["spiral"], [])
    load(linked)
    st.session_state.pg_link_warnings = warnings
st.session_state.setdefault("pg_playing", False)

st.title("2D playground")
st.caption(
    "Train a small network on toy data and watch it carve up the plane. Every class is a colour; "
    "the shading is how sure the network is. Filled points train the network, hollow ones test it."
)
for warning in st.session_state.pop("pg_link_warnings", []):
    st.warning(warning)

# --- settings (sidebar) ------------------------------------------------------------------------
with st.sidebar:
    st.selectbox(
        "Preset",
        list(PRESETS),
        key="pg_preset",
        index=None,
        placeholder="Load a preset…",
        on_change=apply_preset,
    )
    st.subheader("Data")
    upload = st.file_uploader("Your own points (CSV: x1, x2, label)", type=["csv"], key="pg_upload")
    kind = st.selectbox("Data set", KINDS, key="pg_kind", disabled=upload is not None)
    if kind in MULTICLASS_KINDS:
        st.slider("Classes" if kind == "blobs" else "Arms", 2, 5, key="pg_classes")
    else:
        st.session_state.pg_classes = 2
    st.slider("Points", 50, 2000, step=50, key="pg_n", disabled=upload is not None)
    st.slider("Noise", 0.0, 1.0, step=0.05, key="pg_noise", disabled=upload is not None)
    st.slider("Test share", 0.1, 0.5, step=0.05, key="pg_test_fraction")
    seed_col, regen_col = st.columns(2, vertical_alignment="bottom")
    seed_col.number_input("Data seed", 0, 2**31 - 1, key="pg_data_seed")
    regen_col.button(
        "New points",
        key="pg_regen",
        on_click=lambda: st.session_state.update(pg_data_seed=st.session_state.pg_data_seed + 1),
    )

    st.subheader("Network")
    hidden_text = st.text_input(
        "Hidden widths", key="pg_hidden", help="0 to 8 layers of 1 to 128 units, e.g. 32, 32."
    )
    st.selectbox("Activation", ACTIVATIONS, key="pg_activation")
    st.selectbox("Initialisation", INITS, key="pg_init")
    st.slider(
        "Dropout", 0.0, 0.9, step=0.05, key="pg_dropout", disabled=st.session_state.pg_engine == "manual"
    )
    st.number_input("Seed (initial weights, batch order)", 0, 2**31 - 1, key="pg_seed")

    st.subheader("Training")
    st.radio(
        "Gradients from",
        ["autograd", "manual"],
        key="pg_engine",
        horizontal=True,
        format_func={"autograd": "PyTorch autograd", "manual": "manual backprop"}.get,
        help="Manual: mlp.manual's NumPy backprop fills each .grad; the optimizer is the same.",
    )
    st.selectbox("Optimizer", OPTIMIZERS, key="pg_optimizer")
    st.select_slider(
        "Learning rate", options(LRS, st.session_state.pg_lr), key="pg_lr", format_func=lambda v: f"{v:g}"
    )
    st.select_slider(
        "Batch size",
        options(BATCHES, st.session_state.pg_batch_size, zero_last=True),
        key="pg_batch_size",
        format_func=lambda v: "full" if v == 0 else str(v),
    )
    st.select_slider(
        "Weight decay",
        options(DECAYS, st.session_state.pg_weight_decay),
        key="pg_weight_decay",
        format_func=lambda v: f"{v:g}",
    )
    st.selectbox("Learning-rate schedule", SCHEDULERS, key="pg_scheduler")
    st.select_slider(
        "Gradient clipping (max norm)",
        options(CLIPS, st.session_state.pg_grad_clip),
        key="pg_grad_clip",
        format_func=lambda v: "off" if v == 0 else f"{v:g}",
    )
    st.number_input("Epochs (run length and schedule horizon)", 10, 100_000, step=100, key="pg_epochs")

# --- settings -> the run -------------------------------------------------------------------------
values = {name: st.session_state[f"pg_{name}"] for name in asdict(Settings())}
try:
    values["hidden"] = (
        tuple(parse_widths(hidden_text, max_layers=8, max_width=128)) if hidden_text.strip() else ()
    )
except ValueError as err:
    st.sidebar.error(f"{err} Keeping the current network.")
    values["hidden"] = st.session_state.pg_run.settings.hidden if "pg_run" in st.session_state else (32, 32)
if values["engine"] == "manual":
    values["dropout"] = 0.0
try:
    settings = Settings(**values)
except ValueError as err:
    st.error(f"{err} Keeping the previous settings.")
    settings = st.session_state.pg_run.settings

uploaded = None
if upload is not None:
    try:
        uploaded = read_points_csv(upload.getvalue(), upload.name)
        st.sidebar.success(uploaded.note)
    except ValueError as err:
        st.sidebar.error(f"{err} Using the generated data instead.")

run: Playground | None = st.session_state.get("pg_run")
data_key = (tuple(getattr(settings, f) for f in DATA_FIELDS), upload.file_id if uploaded else None)
if run is None or st.session_state.get("pg_data_key") != data_key or run.structure_differs(settings):
    if uploaded is not None:
        points = uploaded_points(uploaded, settings.test_fraction, settings.data_seed, upload.name)
    else:
        points = make_points(settings)
    run = Playground(settings, points)
    st.session_state.pg_run, st.session_state.pg_data_key = run, data_key
    st.session_state.pg_playing = False
elif settings != run.settings:
    run.apply(settings)
if uploaded is None:
    st.query_params.from_dict(to_query(settings))  # the address bar always reproduces this run


# --- controls ----------------------------------------------------------------------------------
def play(on: bool) -> None:
    # Idempotent on purpose: a click that reaches the server twice must not undo itself.
    st.session_state.pg_playing = on and not st.session_state.pg_run.trainer.finished


def pause_then(action) -> None:
    st.session_state.pg_playing = False
    action()


def new_seed() -> None:
    st.session_state.pg_playing = False
    st.session_state.pg_seed += 1


playing = st.session_state.pg_playing
bar = st.columns([1.3, 1.1, 1.2, 1.5, 1.7, 2.4], vertical_alignment="bottom")
if playing:
    label, icon, key = "Pause", ":material/pause:", "pg_pause"
else:
    label, icon, key = "Play", ":material/play_arrow:", "pg_play"
bar[0].button(label, icon=icon, key=key, type="primary", on_click=play, args=(not playing,), width="stretch")
bar[1].button(
    "Step",
    key="pg_step",
    on_click=pause_then,
    args=(lambda: st.session_state.pg_run.run(1),),
    width="stretch",
)
bar[2].button(
    "Epoch",
    key="pg_epoch",
    on_click=pause_then,
    args=(lambda: st.session_state.pg_run.run_epoch(),),
    width="stretch",
)
bar[3].button(
    "Reset",
    icon=":material/restart_alt:",
    key="pg_reset",
    on_click=pause_then,
    args=(lambda: st.session_state.pg_run.reset(),),
    width="stretch",
    help="Back to the same initial weights and batch order: compare runs from one start.",
)
bar[4].button(
    "New init",
    icon=":material/casino:",
    key="pg_reinit",
    on_click=new_seed,
    width="stretch",
    help="Next seed.",
)
bar[5].select_slider("Speed (steps per frame)", SPEEDS, key="pg_speed")


# --- the live part -------------------------------------------------------------------------------
@st.fragment(run_every=FRAME_SECONDS if playing else None)
def live() -> None:
    run: Playground = st.session_state.pg_run
    if st.session_state.pg_playing:
        run.run(st.session_state.pg_speed)
        if run.trainer.finished:
            st.session_state.pg_playing = False
            st.rerun()  # the whole page, to stop the timer and show why
    trainer = run.trainer
    last = trainer.history.epochs[-1] if trainer.history.epochs else None
    cols = st.columns(5)
    cols[0].metric("Epoch", f"{trainer.epoch:,}")
    cols[1].metric("Step", f"{trainer.step_count:,}")
    cols[2].metric("Train loss", f"{last.train_loss:.4f}" if last else "–")
    cols[3].metric("Test loss", f"{last.val_loss:.4f}" if last and last.val_loss is not None else "–")
    cols[4].metric("Test accuracy", f"{last.val_acc:.1%}" if last and last.val_acc is not None else "–")
    if trainer.status == "diverged":
        st.error(
            f"**Training diverged.** {trainer.message} The boundary shows that last good model. "
            "Press **Reset** to start again from the same initial weights.",
            icon=":material/warning:",
        )
    elif dead := run.mostly_dead():
        layers = ", ".join(f"{d} of {u} units in layer {layer}" for layer, d, u in dead)
        st.warning(
            f"**The network is dying:** {layers} output 0 for every training point, so almost no "
            "gradient flows back and training stalls. Lower the learning rate and press **Reset**.",
            icon=":material/heart_broken:",
        )
    elif trainer.status == "done":
        st.info(f"Reached {trainer.epoch:,} epochs, the run's length. Raise *Epochs* to keep training.")

    left, right = st.columns([3, 2], gap="medium")
    with left:
        show_test = st.toggle("Show test points", value=True, key="pg_show_test")
        st.plotly_chart(
            boundary_figure(run.grid_probs(), run.points, show_test), config=CHART, key="pg_boundary"
        )
    with right:
        st.plotly_chart(curves_figure(run.curves(), run.twin_curves()), config=CHART, key="pg_curves")
        st.caption("Confusion matrix on the test points")
        st.plotly_chart(confusion_figure(run.confusion("test")), config=CHART, key="pg_confusion")
    gap = run.engine_gap()
    if gap is not None:
        st.caption(
            f"Engines side by side over {gap['epochs']:,} epochs: largest |Δ train loss| = "
            f"{gap['loss']:.1e}, largest |Δ weight| = {gap['weights']:.1e} (float32 rounding)."
        )
    maps = run.neuron_maps()
    for layer, units in enumerate(maps, start=1):
        st.caption(f"Hidden layer {layer}: what each of its first {len(units)} units outputs over the plane")
        st.plotly_chart(neurons_figure(units), config=CHART, key=f"pg_neurons_{layer}", width="content")


live()

# --- compare, share, export ----------------------------------------------------------------------
with st.expander("Compare manual backprop with autograd"):
    st.markdown(
        f"Train a twin with **{run.other_engine}** gradients from the same initial weights, batches and "
        "optimizer, in lockstep. Its train loss is drawn dashed; the gap stays at float32 rounding."
    )
    compare = st.toggle("Run both engines", key="pg_compare", disabled=settings.dropout > 0)
    if compare != (run.twin is not None):
        try:
            run.compare(compare)
        except ValueError as err:  # dropout switched on since: the manual engine has none
            st.warning(str(err))
with st.expander("Share and export"):
    if uploaded is None:
        st.markdown(
            "The address bar holds every setting: copy it to share this exact run (data, network, training)."
        )
    else:
        st.warning("Uploaded points are not part of a link; share the CSV along with it.")
    cols = st.columns(4)
    cols[0].download_button(
        "Weights (.safetensors)",
        data=lambda: model_to_bytes(run.model, settings=asdict(run.settings)),
        file_name="playground-model.safetensors",
        on_click="ignore",
    )
    cols[1].download_button(
        "Architecture (.json)",
        data=lambda: architecture_json(run.model, settings=asdict(run.settings)),
        file_name="playground-model.json",
        mime="application/json",
        on_click="ignore",
    )
    cols[2].download_button(
        "History (.csv)",
        data=lambda: run.trainer.history.to_frame().to_csv(index=False),
        file_name="history.csv",
        on_click="ignore",
    )
    cols[3].download_button(
        "Data (.csv)", data=lambda: points_csv(run.points), file_name="points.csv", on_click="ignore"
    )
