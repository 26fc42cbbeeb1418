"""The MNIST page's larger views: where the digits come from, and the four tabs under a run."""

import logging
from collections.abc import Callable

import pandas as pd
import streamlit as st

from mlp.data import MnistData, load_mnist
from mlp.data.digits import MAX_IMAGE_MB, digit_from_canvas, digit_from_image
from mlp.data.mnist import for_server
from mlp.export.pieces import model_code
from mlp.figures.classes import confusion_figure, digit_grid, probability_bars
from mlp.figures.curves import compare_figure
from mlp.figures.plane import neurons_image
from mlp.lessons.mnist import MAX_MODEL_MB, to_query
from mlp.links.format import loss_text
from mlp.metrics import neighbour_correlation
from mlp.runs.exports import mnist_files
from mlp.runs.mnist import VAL_FRACTION, MnistSession, first_layer_weights, predict
from pages.ui.lessons import page_url
from pages.ui.pad import digit_pad
from pages.ui.shell import chart, presenter
from pages.ui.text import plain, say


@st.cache_resource(show_spinner="Loading the digits…")
def dataset() -> MnistData:
    """Loaded once per server process and shared, read-only: uint8 pixels, a few MB to 55 MB.
    (The MNIST page trains on it; the class board re-runs MNIST challenges on it.)"""
    data = for_server()
    logging.getLogger(__name__).info(data.note)  # the whole story, paths included, for the log only
    data.holdout(VAL_FRACTION)  # split now, not on the first visitor's Start
    return data


def data_banner(data: MnistData, reload: Callable[[], None]) -> None:
    """Which digits the page trains on, in one line, and (for the sample) a button to fetch the
    full set; not in presenter mode. Visitors see `headline` and `reason`, never the note (which
    may name the server's cache folder: the page logs it)."""
    if data.source == "mnist" or presenter():
        st.caption(data.headline)
        return
    text, button = st.columns([2.6, 1.4], vertical_alignment="center")
    text.info(data.headline, icon=":material/cloud_off:")
    button.button(
        "Download the full MNIST (11 MB)",
        key="mn_download",
        icon=":material/download:",
        on_click=lambda: st.session_state.update(mn_download_asked=True),  # heard even if a rerun follows
    )
    if st.session_state.pop("mn_download_asked", False):
        bar = st.progress(0.0, text="Downloading…")

        def progress(name: str, done: int, total: int | None) -> None:
            bar.progress(min(1.0, done / total) if total else 0.0, text=f"{name}: {done / 1e6:.1f} MB")

        def notice(line: str) -> None:
            bar.progress(0.0, text=line)

        # One download at a time per server: a visitor who clicks during another's waits for it
        # (the bar says so), then uses what it cached.
        full = load_mnist(progress=progress, notice=notice, retries=1, timeout=10)
        if full.source == "mnist":
            reload()
            st.rerun()
        bar.empty()
        st.error(f"Download failed: the page keeps the bundled sample because {plain(full.reason)}.")


@st.cache_data(max_entries=4, show_spinner=False)
def examples(_data: MnistData, source: str, n: int):
    """Ten digits of each class as one grayscale image (made once per data set)."""
    rows = [_data.x_train[_data.y_train == d][:10] for d in range(10)]
    return digit_grid([image for row in rows for image in row])


def evaluation(session: MnistSession, data: MnistData) -> None:
    """How the finished run does on the test digits."""
    view = session.view()
    if not session.ready:
        st.info("The evaluation appears here when training ends (or is stopped).")
        return
    ev = view.evaluation
    a, b = st.columns(2)
    a.metric("Test accuracy", f"{ev.accuracy:.2%}", help=f"On {data.n_test:,} digits it never trained on.")
    b.metric("Test loss", loss_text(ev.loss))
    left, right = st.columns(2)
    with left.container(key="mn_confusion"):
        st.markdown("**Confusion matrix** (true digit down, prediction across)")
        chart(confusion_figure(ev.confusion, height=420))
    with right:
        st.markdown("**Per digit**")
        styles = {"precision": "{:.1%}", "recall": "{:.1%}", "f1": "{:.3f}"}
        st.dataframe(pd.DataFrame(ev.per_class).style.format(styles), hide_index=True, width="stretch")
    with st.container(key="mn_mistakes"):
        mistakes_it_was_surest_about(ev, data)
    tiles = first_layer_weights(view.weights, start=view.first_layer_start)
    learned = "what training changed in" if view.first_layer_start is not None else "the weights of"
    with st.container(key="mn_weights"):
        st.markdown(
            f"**First-layer weights**: {learned} the first {len(tiles)} hidden units, each tile on its own "
            "scale: the strokes each unit looks for (orange adds, blue subtracts)."
        )
        # Eight to a row on a projector: a tile of 28 pixels stays large enough to see its strokes.
        st.image(
            neurons_image(tiles, per_row=8 if presenter() else 16, pixels=3, bottom_up=False),
            alt="First-layer weights: one 28×28 tile per unit",
        )
        st.caption(
            f"Neighbouring pixels agree at {neighbour_correlation(tiles):.2f} on average "
            "(random static: 0; smooth strokes: near 1)."
        )


def mistakes_it_was_surest_about(ev, data: MnistData) -> None:
    """The test digits it got wrong most confidently, each with its top three guesses under it,
    in a cell of its own: the caption wraps within its digit's width and never runs into the next."""
    st.markdown("**Mistakes it was surest about**: true digit → top three guesses")
    grid = st.container(horizontal=True, gap="medium")
    for m in ev.mistakes(data.y_test, limit=16):
        cell = grid.container(width=150 if presenter() else 120, gap=None)
        cell.image(data.x_test[m["index"]], width=112, alt="A test digit the model got wrong")
        cell.caption(f"{m['true']} → " + " · ".join(f"{c}: {p:.0%}" for c, p in m["top3"]))


def guess(model, digit, caption: str, key: str) -> None:
    """The 28×28 digit the network is shown, and its probability for each class."""
    st.image(digit, width=84, caption=caption, alt="The digit as the model sees it, 28×28")
    chart(probability_bars(predict(model, digit)), key=key)


def try_it(session: MnistSession, data: MnistData) -> None:
    """A test digit, a drawn one, a photo: what the network makes of each."""
    model = session.predictor()
    if model is None:
        st.info("Train a model (its weights show up here after each epoch), or load one in *Keep it*.")
        return
    pick, draw, upload = st.columns(3, gap="large")
    with pick:
        st.markdown("**A test digit**")
        index = st.number_input("Test digit number", 0, data.n_test - 1, 0, key="mn_pick")
        guess(model, data.x_test[index], f"labelled {data.y_test[index]}", "mn_pick_bars")
    with draw:
        st.markdown("**Draw one**")
        ink, side = digit_pad("mn_pad")
        try:
            if ink is not None:
                guess(model, digit_from_canvas(ink, side), "what the network sees", "mn_draw_bars")
        except ValueError as err:
            st.warning(say(err))
    with upload:
        st.markdown("**Upload a photo**")
        image_file = st.file_uploader("An image of one digit", key="mn_image", max_upload_size=MAX_IMAGE_MB)
        try:
            if image_file is not None:
                digit = digit_from_image(image_file.getvalue())
                guess(model, digit, "centred and scaled like MNIST", "mn_upload_bars")
        except ValueError as err:
            st.error(say(err))


def keep(session: MnistSession, data: MnistData) -> None:
    """Save the finished run's model, or load one saved here."""
    if session.ready:
        # Bytes, not a deferred download: Streamlit drops a file made on the click after two
        # script runs anywhere on the server (pages/ui/playground.py's export_panel says more).
        run = session.run
        files = mnist_files(run, page_url(to_query(run.settings)) if not run.loaded else "")
        for col, (label, make, name) in zip(st.columns(2) * 2, files, strict=False):
            col.download_button(
                label, data=make(), file_name=name, on_click="ignore", icon=":material/download:"
            )
        if not run.loaded:
            st.caption(
                "The notebook and the script are this run in plain PyTorch: its digits, its network, its "
                "training on the CPU, printing its train loss and test accuracy."
            )
        with st.popover("Copy as code", icon=":material/code:"):
            st.caption("The network alone, in PyTorch (copy it with the button at its top right):")
            st.code(model_code(run.model.config), language="python")
    model_file = st.file_uploader(
        "Load a model saved here (.safetensors)", key="mn_model_file", max_upload_size=MAX_MODEL_MB
    )
    if model_file is not None and session.loaded_file != model_file.file_id:
        try:
            session.load(data, model_file.getvalue(), model_file.name, model_file.file_id)
            st.rerun()
        except ValueError as err:
            st.error(f"Not loaded: {say(err)}")


def compare(session: MnistSession) -> None:
    """Every finished run of the session, side by side."""
    if not session.runs:
        st.info("Every finished run of this session lands here, to compare settings and results.")
        return
    st.dataframe(pd.DataFrame([r.row() for r in session.runs]), hide_index=True, width="stretch")
    chart(compare_figure(session.runs))


TABS = {"Evaluate": evaluation, "Try it": try_it, "Keep it": keep, "Compare runs": lambda s, _: compare(s)}


def tabs(session: MnistSession, data: MnistData) -> None:
    """The four views under a run; lazy: only the open tab's content runs and reaches the browser."""
    for tab, draw in zip(st.tabs(list(TABS), key="mn_tab", on_change="rerun"), TABS.values(), strict=True):
        if tab.open:
            with tab:
                draw(session, data)
