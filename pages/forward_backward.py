"""Forward & backward, step by step: every operation of an MLP with its equation, code and shapes."""

import pandas as pd
import streamlit as st

import pages.ui as ui
from mlp.curriculum.tour import TOUR
from mlp.figures.diagrams import shape_lines, shape_svg
from mlp.figures.tensors import spread_figure
from mlp.lessons.checks import step_checks
from mlp.lessons.forward_backward import (
    BATCH_AND_NETWORK,
    FIXED_D_IN,
    FIXED_K,
    SPECS,
    VIEW_SPECS,
    from_query,
    from_widgets,
    run_lesson,
    to_query,
    view_from_query,
)
from mlp.lessons.init_spread import spread_summary
from mlp.lessons.shapes import shape_story
from mlp.lessons.tables import layer_table, tensor_table
from mlp.manual import pass_source, step_code
from pages.ui.forward import (
    COUNTS,
    ICONS,
    STEP_KEY,
    STEPS_KEY,
    TAB_LABELS,
    cached_gradient_report,
    cached_spread,
    current_view,
    display_formula,
    export_panel,
    init_view_defaults,
    open_view,
    pass_fail,
    step_heatmaps,
    teacher_panel,
    walk_buttons,
    walk_within,
)

ui.require_shell()


def load(query) -> None:
    """Fill the page from a link's query (a lesson's): the network and batch, the tab, the step."""
    settings, _ = from_query(ui.settings_query(query))
    ui.load_settings("fb_", SPECS, settings)
    open_view(view_from_query(ui.settings_query(query), settings)[0])


saved, notes = ui.page_settings("fb_", SPECS, lambda: from_query(ui.link_query()))
if "fb_view_opened" not in st.session_state:  # a first visit: where the link points
    view, view_notes = view_from_query(ui.link_query(), saved)
    open_view(view)
    st.session_state.fb_view_opened, notes = True, [*notes, *view_notes]
ui.page_header(
    "Forward & backward, step by step",
    "One batch through a small MLP: every operation of the forward pass and of backprop, with its "
    "equation, the code that computes it, the shapes, and the numbers.",
)
ui.show_link_notes(notes)
lesson_link = ui.lesson_panel("fb_", "forward_backward", load, walk=walk_within)
touring = TOUR in lesson_link  # on a tour's stop, ← and → are the tour's: it walks the steps

# --- the network and the batch (sidebar) -----------------------------------------------------
with st.sidebar:
    st.subheader(BATCH_AND_NETWORK)
    source = ui.control("fb_", SPECS, "source")
    if source == "toy":
        ui.control("fb_", SPECS, "toy_kind")
    ui.control("fb_", SPECS, "n")
    for name, fixed in (("d_in", FIXED_D_IN.get(source)), ("k", FIXED_K.get(source))):
        if fixed:  # a separate, disabled widget shows the width the data fixes
            st.number_input(SPECS[name].label, value=fixed, disabled=True, key=f"fb_{name}_{source}")
        else:
            ui.control("fb_", SPECS, name)
        if name == "d_in":
            ui.control("fb_", SPECS, "hidden")
    for name in ("activation", "init", "seed", "lr"):
        ui.control("fb_", SPECS, name)

cfg, problems = from_widgets({name: st.session_state.get(f"fb_{name}") for name in SPECS}, saved)
st.session_state.fb_settings = cfg
for problem in problems:
    st.sidebar.error(f"{ui.say(problem)} Showing the last valid network.")
lesson = run_lesson(cfg)
names = st.session_state[STEPS_KEY] = [s.name for s in lesson.steps]
presenting = ui.presenter()  # the step's equation and numbers first, and everything ≥ 16 px
arch = f"{' → '.join(map(str, lesson.widths))} · {cfg.activation} · {SPECS['init'].show(cfg.init)} init"
# One container for what comes and goes above the tabs, so the open tab stays open.
with st.container():
    if not presenting:  # on a projector, below the walk: the first screen is the step's
        st.markdown(f"**Network** {arch} · **batch** {lesson.batch.note}")
    if lesson.batch.images is not None and not presenting:
        labels = [str(v) for v in lesson.batch.y[:16]]
        st.image(list(lesson.batch.images[:16]), caption=labels, width=56, alt=[f"A {v}" for v in labels])
    if not presenting:
        teacher_panel(cfg)
    if cfg.break_grad:
        st.warning(
            "Backprop is deliberately broken: it uses 1 − f′(z) instead of f′(z). See *Gradient check*."
        )

steps_tab, overview_tab, grad_tab, init_tab = st.tabs(
    list(TAB_LABELS.values()), key="fb_tab", on_change="rerun"
)

# --- step by step --------------------------------------------------------------------------------
if st.session_state.get(STEP_KEY) not in names:  # a new network, or the chosen pill clicked off
    st.session_state[STEP_KEY] = (
        st.session_state.get("fb_step") if st.session_state.get("fb_step") in names else names[0]
    )

with steps_tab:
    index = names.index(st.session_state[STEP_KEY])
    prev_col, next_col, title_col = st.columns([1.8, 1.5, 7], vertical_alignment="center")
    walk_buttons(names, index, (prev_col, next_col), arrows=not touring)
    pills = st.container()  # the jump pills: here, or on a projector below the step's numbers
    step = lesson.result.step(names[index])
    st.session_state.fb_step = step.name
    title_col.subheader(f"Step {index + 1} of {len(names)} · {step.phase} · `{step.name}`")
    story = shape_story(lesson, step)
    with st.container(key="fb_equation"):
        formula_col, shapes_col = st.columns([2, 3], vertical_alignment="center")
        formula_col.latex(display_formula(step.formula))
        shapes_col.markdown(shape_lines(story), unsafe_allow_html=True)
    backends = {"numpy": "NumPy", "torch": "PyTorch"}
    backend = st.session_state.get("fb_backend") or "numpy"  # chosen with the code, below
    with st.container(key="fb_heatmaps"):
        step_heatmaps(lesson, step, backend, presenting)
    with st.container() if presenting else pills:
        st.pills("Jump to a step", names, key=STEP_KEY)
    if presenting:  # the diagram at full width, its text at least its natural 16 px; the code below
        diagram_col, code_col = st.container(), st.container()
    else:
        code_col, diagram_col = st.columns([1, 1.25], gap="large")
    with code_col, st.container(key="fb_code"):
        st.segmented_control(
            "Code", list(backends), default="numpy", key="fb_backend", format_func=backends.get
        )
        st.code(step_code(step, backend, cfg.activation, cfg.break_grad), language="python", wrap_lines=True)
        for check in step_checks(lesson, step):
            st.markdown(
                f"{ICONS[check.ok]} **{check.label}** {('— ' + check.detail) if check.detail else ''}"
            )
    with diagram_col:
        st.markdown(shape_svg(story, grow=1.8 if presenting else 1.2), unsafe_allow_html=True)
        st.markdown(story.sentence)
    st.caption(
        f"Numbers from the {backends[backend]} code; the two agree to "
        f"{lesson.backend_diff:.1e} on every step (float32 rounding)."
    )
    with st.expander("The loop that runs these steps: `mlp.manual.forward_backward`"):
        st.code(pass_source(), language="python", wrap_lines=True)  # no sideways scroll to reach
    if presenting:  # what the first screen left out
        st.markdown(f"**Network** {arch} · **batch** {lesson.batch.note}")
        teacher_panel(cfg)

# --- overview ------------------------------------------------------------------------------------
with overview_tab:
    layers = pd.DataFrame(layer_table(lesson.widths, cfg.n))
    a, b, c = st.columns(3)
    a.metric("Parameters", f"{int(layers['parameters'].sum()):,}")
    b.metric("Forward FLOPs", f"{int(layers['forward FLOPs'].sum()):,}")
    c.metric("Tensors in one pass", len(lesson.result.tensors))
    st.markdown(
        "Each layer has **(n_in + 1) × n_out** parameters (the +1 is the bias) and its matmul costs "
        "**2 · N · n_in · n_out** FLOPs (a multiply and an add per term). For one hidden layer of width h "
        "the forward pass is **O(N · d_in · h + N · h · K)**; backprop costs about twice that."
    )
    counts = {column: st.column_config.NumberColumn(format="localized") for column in COUNTS}
    st.dataframe(layers, hide_index=True, width="stretch", column_config=counts)
    st.markdown("**Every tensor of one forward and backward pass** (float32: 4 bytes per element).")
    st.dataframe(pd.DataFrame(tensor_table(lesson)), hide_index=True, width="stretch", column_config=counts)

# --- gradient check ------------------------------------------------------------------------------
with grad_tab:
    ui.control("fb_", SPECS, "break_grad")
    report = cached_gradient_report(cfg, lesson)
    ok, verdict = report.verdict()
    (st.success if ok else st.error)(verdict)
    st.markdown("**Manual vs autograd**, like makemore's `cmp`: exact, close (allclose), max |difference|.")
    st.caption(  # the walk's last steps use these very gradients
        f"The update at the end of the walk moves each parameter by −lr × these gradients (lr = {cfg.lr:g}); "
        "each update step checks itself against one step of `torch.optim.SGD`."
    )
    st.dataframe(
        pass_fail(pd.DataFrame(report.autograd_rows())), hide_index=True, width="stretch", key="fb_cmp"
    )
    st.markdown(
        "**Central finite differences** on sampled entries: (L(θ + ε) − L(θ − ε)) / 2ε with ε = 1e-6."
    )
    fd = pd.DataFrame(report.finite_difference_rows())
    st.dataframe(pass_fail(fd), hide_index=True, width="stretch", key="fb_fd", height=38 + 35 * len(fd))

# --- initialisation ------------------------------------------------------------------------------
with init_tab:
    init_view_defaults()
    depth_col, width_col = st.columns(2)
    with depth_col:
        depth = ui.slider("Layers", VIEW_SPECS["spread_depth"], "fb_init_depth")
    with width_col:
        width = ui.stops("Width", VIEW_SPECS["spread_width"], "fb_init_width")
    spread = cached_spread(cfg.activation, depth, width)
    ui.chart(spread_figure(spread, cfg.activation), key="fb_spread")
    st.markdown(spread_summary(spread, cfg.activation))

page_link = to_query(cfg, current_view()) | lesson_link
st.query_params.from_dict(page_link | ui.switches_query())
ui.share_link(page_link)
export_panel(lesson, ui.page_url(page_link))
