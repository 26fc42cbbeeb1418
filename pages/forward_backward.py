"""Forward & backward, step by step: every operation of an MLP with its equation, code and shapes."""

import numpy as np
import pandas as pd
import streamlit as st

from mlp.data import KINDS
from mlp.diagrams import shape_svg
from mlp.manual import op_source, pass_source
from mlp.model import ACTIVATIONS, INITS
from mlp.plots import spread_figure, tensor_heatmap
from mlp.walkthrough import (
    GradientReport,
    Lesson,
    LessonConfig,
    activation_spread,
    gradient_report,
    layer_table,
    parse_widths,
    run_lesson,
    shape_story,
    spread_summary,
    step_checks,
    tensor_table,
)
from pages import require_shell

require_shell()

SOURCE_LABELS = {"gaussian": "Random numbers", "toy": "2D toy points", "mnist": "MNIST digits"}
INIT_LABELS = {
    "kaiming": "He (Kaiming)",
    "xavier": "Xavier (Glorot)",
    "normal": "N(0, 0.02)",
    "pytorch": "PyTorch",
}
CHART = {"displayModeBar": False}
# Material icons ship with Streamlit, so they render where no emoji font is installed.
ICONS = {
    True: ":green[:material/check_circle:]",
    False: ":red[:material/cancel:]",
    None: ":blue[:material/info:]",
}


@st.cache_data(max_entries=64, show_spinner=False)
def cached_gradient_report(cfg: LessonConfig, _lesson: Lesson) -> GradientReport:
    """The gradient check depends only on the config: computed once per network and batch."""
    return gradient_report(_lesson)


@st.cache_data(max_entries=64, show_spinner=False)
def cached_spread(activation: str, depth: int, width: int) -> dict[str, list[float]]:
    return activation_spread(activation=activation, depth=depth, width=width)


def pass_fail(frame: pd.DataFrame, column: str = "status"):
    """Colour a pass/FAIL column green or red."""
    colours = {
        "pass": "background-color: rgba(0, 158, 115, 0.25)",
        "FAIL": "background-color: rgba(213, 94, 0, 0.35)",
    }
    return frame.style.map(lambda v: colours.get(v, ""), subset=[column])


st.title("Forward & backward, step by step")
st.caption(
    "One batch through a small MLP: every operation of the forward pass and of backprop, with its "
    "equation, the code that computes it, the shapes, and the numbers."
)

# --- the network and the batch (sidebar) -----------------------------------------------------
with st.sidebar:
    st.subheader("Network and batch")
    source = st.selectbox("Input", list(SOURCE_LABELS), format_func=SOURCE_LABELS.get, key="fb_source")
    toy_kind = st.selectbox("Toy set", KINDS, index=1, key="fb_toy") if source == "toy" else "moons"
    n = st.number_input("Batch size N", 1, 1024, 4, key="fb_n")
    fixed_d_in = {"toy": 2, "mnist": 784}.get(source)
    if fixed_d_in:  # a separate, disabled widget shows the width the data fixes
        d_in = st.number_input("Input width d_in", value=fixed_d_in, disabled=True, key=f"fb_d_in_{source}")
    else:
        d_in = st.number_input("Input width d_in", 1, 1024, 3, key="fb_d_in")
    hidden_text = st.text_input(
        "Hidden widths", "5", key="fb_hidden", help="1 to 4 widths, e.g. 5 or 256, 128."
    )
    try:
        st.session_state.fb_hidden_ok = parse_widths(hidden_text)
    except ValueError as err:
        st.error(f"{err} Showing the last valid network.")
    hidden = st.session_state.get("fb_hidden_ok", [5])
    if source == "mnist":
        k = st.number_input("Classes K", value=10, disabled=True, key="fb_k_mnist", help="Ten digits.")
    else:
        k = st.number_input("Classes K", 2, 100, 3, key="fb_k")
    activation = st.selectbox("Activation", ACTIVATIONS, key="fb_activation")
    init = st.selectbox("Initialisation", INITS, format_func=INIT_LABELS.get, key="fb_init")
    seed = st.number_input("Seed", 0, 2**31 - 1, 0, key="fb_seed")

cfg = LessonConfig(
    n=int(n),
    d_in=int(fixed_d_in or d_in),
    hidden=hidden,
    k=int(k),
    activation=activation,
    init=init,
    seed=int(seed),
    source=source,
    toy_kind=toy_kind,
    break_grad=st.session_state.get("fb_break", False),
)
lesson = run_lesson(cfg)
names = [s.name for s in lesson.steps]
arch = " → ".join(str(w) for w in lesson.widths)
# One container for what comes and goes above the tabs, so the open tab stays open.
with st.container():
    st.markdown(
        f"**Network** {arch} · {activation} · {INIT_LABELS[init]} init · **batch** {lesson.batch.note}"
    )
    if lesson.batch.images is not None:
        st.image(list(lesson.batch.images[:16]), caption=[str(v) for v in lesson.batch.y[:16]], width=56)
    if cfg.break_grad:
        st.warning(
            "Backprop is deliberately broken: it uses 1 − f′(z) instead of f′(z). See *Gradient check*."
        )

steps_tab, overview_tab, grad_tab, init_tab = st.tabs(
    ["Step by step", "Overview", "Gradient check", "Initialisation"]
)


# --- step by step --------------------------------------------------------------------------------
if st.session_state.get("fb_jump") not in names:
    st.session_state.fb_jump = names[0]


def move(delta: int) -> None:
    current = names.index(st.session_state.fb_jump) if st.session_state.fb_jump in names else 0
    st.session_state.fb_jump = names[min(max(current + delta, 0), len(names) - 1)]


with steps_tab:
    prev_col, next_col, title_col = st.columns([1.8, 1.5, 7], vertical_alignment="center")
    prev_col.button("◀ Previous", on_click=move, args=(-1,), key="fb_prev", width="stretch")
    next_col.button("Next ▶", on_click=move, args=(1,), key="fb_next", width="stretch")
    chosen = st.pills("Jump to a step", names, key="fb_jump")
    name = chosen if chosen in names else names[0]
    step = lesson.result.step(name)
    index = names.index(name)
    title_col.subheader(f"Step {index + 1} of {len(names)} · {step.phase} · `{name}`")

    left, right = st.columns(2, gap="large")
    with left:
        st.latex(step.formula)
        backend = (
            st.segmented_control(
                "Code",
                ["numpy", "torch"],
                default="numpy",
                key="fb_backend",
                format_func={"numpy": "NumPy", "torch": "PyTorch"}.get,
            )
            or "numpy"
        )
        call = f"{name} = {step.op}({', '.join(step.inputs)})"
        st.code(f"# this step: {call}\n{op_source(backend, step.op)}", language="python", wrap_lines=True)
        for check in step_checks(lesson, step):
            st.markdown(
                f"{ICONS[check.ok]} **{check.label}** {('— ' + check.detail) if check.detail else ''}"
            )
    with right:
        story = shape_story(lesson, step)
        st.markdown(shape_svg(story), unsafe_allow_html=True)
        st.markdown(story.sentence)

    shown_pass = lesson.passes[backend]
    operands = [i for i in step.inputs if i != "y" or step.op == "one_hot"]
    tensors = [*operands, name]
    for row in range(0, len(tensors), 2):  # two per row: room to print each value of a small tensor
        for col, tensor in zip(st.columns(2), tensors[row : row + 2], strict=False):
            value = np.asarray(shown_pass.tensors[tensor])
            with col:
                if value.ndim == 0:
                    st.metric(tensor, f"{float(value):.4f}")
                else:
                    figure = tensor_heatmap(value, tensor, lesson.symbols(tensor))
                    st.plotly_chart(figure, config=CHART, key=f"fb_heat_{tensor}")
    st.caption(
        f"Numbers from the {'NumPy' if backend == 'numpy' else 'PyTorch'} code; the two agree to "
        f"{lesson.backend_diff:.1e} on every step (float32 rounding)."
    )
    with st.expander("The loop that runs these steps: `mlp.manual.forward_backward`"):
        st.code(pass_source(), language="python")

# --- overview ------------------------------------------------------------------------------------
with overview_tab:
    layers = pd.DataFrame(layer_table(lesson.widths, cfg.n))
    total_params = int(layers["parameters"].sum())
    a, b, c = st.columns(3)
    a.metric("Parameters", f"{total_params:,}")
    b.metric("Forward FLOPs", f"{int(layers['forward FLOPs'].sum()):,}")
    c.metric("Tensors in one pass", len(lesson.result.tensors))
    st.markdown(
        "Each layer has **(n_in + 1) × n_out** parameters (the +1 is the bias) and its matmul costs "
        "**2 · N · n_in · n_out** FLOPs (a multiply and an add per term). For one hidden layer of width h "
        "the forward pass is **O(N · d_in · h + N · h · K)**; backprop costs about twice that."
    )
    counts = {
        column: st.column_config.NumberColumn(format="localized")
        for column in ("parameters", "forward FLOPs", "backward FLOPs", "elements", "bytes")
    }
    st.dataframe(layers, hide_index=True, width="stretch", column_config=counts)
    st.markdown("**Every tensor of one forward and backward pass** (float32: 4 bytes per element).")
    st.dataframe(pd.DataFrame(tensor_table(lesson)), hide_index=True, width="stretch", column_config=counts)

# --- gradient check ------------------------------------------------------------------------------
with grad_tab:
    st.toggle(
        "Break the gradient (flip the activation mask in backprop)",
        key="fb_break",
        help="Backprop then uses 1 − f′(z): for ReLU, gradient flows through the units that were off.",
    )
    report = cached_gradient_report(cfg, lesson)
    if report.ok:
        st.success("Every manual gradient matches PyTorch autograd and central finite differences (float64).")
    else:
        bad = [r.name for r in report.against_autograd if not r.close]
        st.error(
            f"{', '.join(bad) or 'Some gradients'} disagree with autograd. "
            "Everything above the broken step is still right: the error enters at dz and flows down."
        )
    st.markdown("**Manual vs autograd**, like makemore's `cmp`: exact, close (allclose), max |difference|.")
    st.dataframe(pass_fail(pd.DataFrame(report.autograd_rows())), hide_index=True, width="stretch")
    st.markdown(
        "**Central finite differences** on sampled entries: (L(θ + ε) − L(θ − ε)) / 2ε with ε = 1e-6."
    )
    st.dataframe(pass_fail(pd.DataFrame(report.finite_difference_rows())), hide_index=True, width="stretch")

# --- initialisation ------------------------------------------------------------------------------
with init_tab:
    depth_col, width_col = st.columns(2)
    depth = depth_col.slider("Layers", 4, 20, 10, key="fb_init_depth")
    width = width_col.select_slider("Width", [64, 128, 256, 512], 256, key="fb_init_width")
    spread = cached_spread(activation, depth, width)
    st.plotly_chart(spread_figure(spread, activation), config=CHART, key="fb_spread")
    st.markdown(spread_summary(spread, activation))
