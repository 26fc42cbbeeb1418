"""The forward & backward page's pieces: labels, cached computations, where a link opens it, and
the walk's moves (`step_forward`, `step_back`, `go_to`), which a guided tour may call too."""

import numpy as np
import pandas as pd
import streamlit as st

from mlp.curriculum.teacher import D_IN, EPOCHS, POINTS, teacher_curve
from mlp.export.pieces import model_code
from mlp.export.walk import walk_config, walk_notebook
from mlp.figures.curves import epoch_curves_figure
from mlp.figures.style import PRESENTER_FONT_PX
from mlp.figures.tensors import number_text, tensor_heatmap
from mlp.lessons.checks import GradientReport, gradient_report
from mlp.lessons.forward_backward import ForwardSettings, ForwardView, Walkthrough, operands, step_names
from mlp.lessons.init_spread import activation_spread
from mlp.links.format import loss_text
from mlp.manual import NEW, Step
from pages.ui.shell import chart

# Material icons ship with Streamlit, so they render where no emoji font is installed.
ICONS = {
    True: ":green[:material/check_circle:]",
    False: ":red[:material/cancel:]",
    None: ":blue[:material/info:]",
}
COUNTS = ("parameters", "forward FLOPs", "backward FLOPs", "elements", "bytes")


@st.cache_data(max_entries=64, show_spinner=False)
def cached_gradient_report(cfg: ForwardSettings, _lesson: Walkthrough) -> GradientReport:
    """The gradient check depends only on the settings: computed once per network and batch."""
    return gradient_report(_lesson)


@st.cache_data(max_entries=64, show_spinner=False)
def cached_spread(activation: str, depth: int, width: int) -> dict[str, list[float]]:
    return activation_spread(activation=activation, depth=depth, width=width)


@st.cache_data(max_entries=32, show_spinner=False)
def cached_teacher_curve(hidden: tuple[int, ...], k: int, activation: str, init: str, seed: int) -> dict:
    """A student trained on the teacher task: the same for every visitor who asks (about 2 s)."""
    return teacher_curve(hidden, k, activation, init, seed)


def teacher_panel(cfg: ForwardSettings) -> None:
    """With the teacher's data: this page's network trained on the whole task, and its curve."""
    if cfg.source != "teacher":
        return
    widths = " → ".join(map(str, (D_IN, *cfg.hidden, cfg.k)))
    with st.container(border=True, key="fb_teacher"):
        st.markdown(
            f"**The whole task.** The page's batch is {cfg.n} of {POINTS:,} points that a fixed random "
            f"network labelled. Train this student ({widths}, Adam, batches of 64) on four fifths of "
            f"them for {EPOCHS} epochs and test it on the rest."
        )
        key = (cfg.hidden, cfg.k, cfg.activation, cfg.init, cfg.seed)
        st.button(  # a callback: the page's own reruns (a link's view opening) keep the click
            "Train the student",
            key="fb_teacher_train",
            icon=":material/model_training:",
            help="A few seconds; the same network and seed give the same curve to everyone.",
            on_click=lambda: st.session_state.update(fb_teacher_curve=(key, cached_teacher_curve(*key))),
        )
        trained = st.session_state.get("fb_teacher_curve")
        if trained is None or trained[0] != key:
            return
        curve = trained[1]
        chart(epoch_curves_figure(curve), key="fb_teacher_chart")
        st.caption(
            f"Train loss {loss_text(curve['train_loss'][0])} after the first epoch, "
            f"{loss_text(curve['train_loss'][-1])} after the last (a guess scores ln {cfg.k} = "
            f"{loss_text(float(np.log(cfg.k)))}); test accuracy {curve['val_acc'][-1]:.1%}."
        )


def pass_fail(frame: pd.DataFrame, column: str = "status"):
    """Colour a pass/FAIL column green or red."""
    colours = {
        "pass": "background-color: rgba(0, 158, 115, 0.25)",
        "FAIL": "background-color: rgba(213, 94, 0, 0.35)",
    }
    return frame.style.map(lambda v: colours.get(v, ""), subset=[column])


TAB_LABELS = {
    "steps": "Step by step",
    "overview": "Overview",
    "gradients": "Gradient check",
    "init": "Initialisation",
}


def open_view(view: ForwardView) -> None:
    """Open the page where a link (or a lesson) says: its tab, its step, its initialisation stack."""
    st.session_state.update(
        fb_tab=TAB_LABELS[view.tab],
        fb_step=view.step,
        fb_jump=view.step,
        fb_init_depth=view.spread_depth,
        fb_init_width=view.spread_width,
    )


def init_view_defaults() -> None:
    """Streamlit forgets a widget's value while its page is away: back there, the view's defaults."""
    st.session_state.setdefault("fb_init_depth", ForwardView.spread_depth)
    st.session_state.setdefault("fb_init_width", ForwardView.spread_width)


def current_view() -> ForwardView:
    """Where the visitor is now, for the page's link."""
    tab = next((k for k, label in TAB_LABELS.items() if label == st.session_state.get("fb_tab")), "steps")
    return ForwardView(
        tab,
        st.session_state.get("fb_step", "z1"),
        st.session_state.fb_init_depth,
        st.session_state.fb_init_width,
    )


# --- the walk: where it is, and the moves a button, a key or a guided tour makes ------------------

STEP_KEY = "fb_jump"  # the step shown: the "Jump to a step" pills' key
STEPS_KEY = "fb_steps"  # the steps of the network on the page, in order


def walk_steps() -> list[str]:
    """The steps of the network the page shows (of its settings if it hasn't drawn yet)."""
    settings = st.session_state.get("fb_settings") or ForwardSettings()
    return st.session_state.get(STEPS_KEY) or step_names(len(settings.hidden))


def go_to(step: str) -> None:
    """Show `step` ("z1", "dW1", "W1_new", ...): call before the page draws, or in a callback."""
    names = walk_steps()
    if step not in names:
        raise ValueError(f"This network has no step {step!r}; its steps are {', '.join(names)}.")
    st.session_state[STEP_KEY] = st.session_state["fb_step"] = step


def step_by(delta: int) -> None:
    """Move the walk `delta` steps, stopping at its first and last step."""
    names = walk_steps()
    now = st.session_state.get(STEP_KEY)
    index = names.index(now) if now in names else 0
    go_to(names[min(max(index + delta, 0), len(names) - 1)])


def step_forward() -> None:
    """The next step of the walk (the last stays the last)."""
    step_by(1)


def step_back() -> None:
    """The previous step of the walk (the first stays the first)."""
    step_by(-1)


def walk_within(by: int, span: tuple[str, str]) -> bool:
    """A guided tour's → or ← on this page (pages/ui/tour.py): one step `by` within `span`, a
    stop's first and last step; False past either end, for the tour to move to another stop."""
    names = walk_steps()
    first, last = names.index(span[0]), names.index(span[1])
    now = st.session_state.get(STEP_KEY)
    target = (names.index(now) if now in names else first) + by
    if not first <= target <= last:
        return False
    go_to(names[target])
    return True


def walk_buttons(names: list[str], index: int, box, arrows: bool = True) -> None:
    """◀ Previous and Next ▶ into the two columns of `box`; ← and → press them unless `arrows` is
    False (on a tour's stop, where the tour owns the keys)."""
    prev_col, next_col = box
    prev_col.button(
        "◀ Previous",
        key="fb_prev",
        on_click=step_back,
        width="stretch",
        disabled=index == 0,
        shortcut="ArrowLeft" if arrows else None,
    )
    next_col.button(
        "Next ▶",
        key="fb_next",
        on_click=step_forward,
        width="stretch",
        disabled=index == len(names) - 1,
        shortcut="ArrowRight" if arrows else None,
    )


def display_formula(tex: str) -> str:
    """A step's equation as the page shows it: its definition of f (or lr) on a second line, so
    that it fits the column beside the shapes instead of scrolling sideways."""
    return r"\begin{gathered}" + tex.replace(r",\quad ", r" \\ ") + r"\end{gathered}"


def step_heatmaps(lesson: Walkthrough, step: Step, backend: str, presenting: bool) -> None:
    """The numbers the step reads and makes, a heatmap each (a scalar as a number). On a projector
    up to three share a row, so the step's numbers fit the first screen under its equation."""
    tensors = operands(step)
    values = lesson.passes[backend].tensors
    # Three in a row only where no printed number of 18 px needs more room than a third gives it.
    narrow = all(np.shape(values[t])[-1:] < (5,) or np.shape(values[t])[-1] > 8 for t in tensors)
    per_row = len(tensors) if presenting and len(tensors) <= 3 and narrow else 2
    columns = (8 if per_row == 2 else 5) if presenting else 10  # numbers printed up to this many columns
    # On a projector: numbers of 18 px in the colour bar's room, and two rows of maps in the first screen.
    room = (
        {"scale_with_numbers": False, "text_px": PRESENTER_FONT_PX, "max_height": 160} if presenting else {}
    )
    for row in range(0, len(tensors), per_row):
        for col, tensor in zip(st.columns(per_row), tensors[row : row + per_row], strict=False):
            value = np.asarray(values[tensor])
            if value.ndim == 0 and tensor.endswith(NEW):  # the loss after the update, against before
                change = float(value) - float(np.asarray(values[tensor[: -len(NEW)]]))
                col.metric(
                    tensor, loss_text(float(value)), delta=number_text(change, "+.4f"), delta_color="inverse"
                )
            elif value.ndim == 0:
                col.metric(tensor, loss_text(float(value)))
            else:
                figure = tensor_heatmap(value, tensor, lesson.symbols(tensor), annotate_cols=columns, **room)
                chart(figure, col, key=f"fb_heat_{tensor}")


def export_panel(lesson: Walkthrough, link: str) -> None:
    """The walk as a notebook and as a script in plain PyTorch, and the network alone as code."""
    with st.expander("Export", icon=":material/download:", key="fb_export", on_change="rerun") as box:
        if not box.open:  # made only when asked for
            return
        book = walk_notebook(lesson, link)
        st.caption(
            "This walk in plain PyTorch: the same batch and initial weights, every step of the forward "
            "pass and of backprop by hand, checked against autograd, then the update. It prints the "
            "numbers shown here."
            + (
                " It backpropagates correctly: the broken gradient is this page's alone."
                if lesson.cfg.break_grad
                else ""
            )
        )
        notebook_col, script_col, code_col = st.columns(3)
        notebook_col.download_button(
            "Notebook (.ipynb)", data=book.ipynb(), file_name="forward-backward.ipynb", on_click="ignore"
        )
        script_col.download_button(
            "Script (.py)", data=book.script(), file_name="forward-backward.py", on_click="ignore"
        )
        with code_col.popover("Copy as code", icon=":material/code:"):
            st.caption("The network alone, in PyTorch (copy it with the button at its top right):")
            st.code(model_code(walk_config(lesson)), language="python")
