"""The forward & backward page: AppTest drives the controls; Chromium renders it."""

import json
from contextlib import contextmanager
from unittest import mock

import pytest
import streamlit as st

from mlp.lessons.forward_backward import ForwardSettings, run_lesson
from tests.conftest import open_page, shoot, wait_for_app

PAGE = "pages/forward_backward.py"
TWO_LAYER_STEPS = ["z1", "a1", "z2", "probs", "loss", "Y", "dz2", "dW2", "db2", "da1", "dz1", "dW1", "db1"]
UPDATE_STEPS = ["W1_new", "b1_new", "W2_new", "b2_new", "loss_new"]


@contextmanager
def patched_state(app):
    """Run a page function as a tour's callback would: on the app's session state."""
    with mock.patch.object(st, "session_state", app.session_state):
        yield


@pytest.fixture
def at():
    return open_page(PAGE)


def header(app) -> str:
    return next(h.value for h in app.subheader if h.value.startswith("Step "))


def table(app, column: str):
    """The page's table that has `column`, wherever it sits on the page."""
    return next(d.value for d in app.dataframe if column in d.value.columns)


def svg(app) -> str:
    return next(m.value for m in app.markdown if m.value.startswith("<svg"))


def shapes(app) -> str:
    """The step's shapes written out under its equation, in symbols and in numbers."""
    return next(m.value for m in app.markdown if "font-family: monospace" in m.value)


@pytest.mark.slow
def test_next_walks_every_forward_and_backward_step_and_previous_walks_back(at):
    assert at.button(key="fb_prev").disabled  # nothing before the first step
    seen = [at.session_state["fb_jump"]]
    for _ in range(len(TWO_LAYER_STEPS + UPDATE_STEPS) - 1):
        assert f"`{seen[-1]}`" in header(at)
        at.button(key="fb_next").click().run()
        assert not at.exception
        seen.append(at.session_state["fb_jump"])
    assert seen == TWO_LAYER_STEPS + UPDATE_STEPS
    assert "Step 18 of 18 · update" in header(at)
    assert at.button(key="fb_next").disabled and not at.button(key="fb_prev").disabled  # the end
    at.button(key="fb_prev").click().run()
    assert at.session_state["fb_jump"] == "b2_new"


@pytest.mark.slow
def test_shapes_shown_match_the_tensors(at):
    lesson = run_lesson(ForwardSettings(n=4, d_in=3, hidden=(5,), k=3))
    for name in TWO_LAYER_STEPS:
        at.session_state["fb_jump"] = name
        at.run()
        step = lesson.result.step(name)
        expected = "(" + ", ".join(str(s) for s in step.shape) + ("," if len(step.shape) == 1 else "") + ")"
        assert f"→ {expected}</div>" in shapes(at), (name, expected)
        assert svg(at).endswith("</svg>")
    at.session_state["fb_jump"] = "z1"
    at.run()
    assert "(4, 3) @ (3, 5) + (5,) → (4, 5)" in shapes(at)
    assert any("inner sizes (d_in = 3) must match" in m.value for m in at.markdown)
    at.session_state["fb_jump"] = "db1"
    at.run()
    assert any("Summing dz1 (4, 5) over its 4 rows gives db1 (5,)" in m.value for m in at.markdown)
    assert any("same shape as b1" in m.value and "check_circle" in m.value for m in at.markdown)


@pytest.mark.slow
def test_each_step_shows_its_equation_and_the_code_that_runs(at):
    at.session_state["fb_jump"] = "dz2"
    at.run()
    assert r"dz_{2} = \frac{P - Y}{N}" in at.latex[0].value
    code = at.code[0].value
    assert "dz2 = dlogits(probs, Y)" in code and "return (probs - Y) / len(probs)" in code
    assert code.startswith("# this step:  (NumPy and PyTorch run this very code)")
    at.segmented_control(key="fb_backend").set_value("torch").run()
    at.session_state["fb_jump"] = "probs"
    at.run()
    assert "logits.amax(dim=1, keepdim=True)" in at.code[0].value
    assert any(":green[:material/check_circle:] **rows sum to 1**" in m.value for m in at.markdown)


def test_dz1_shows_the_derivative_it_multiplies_by_and_the_code_that_computes_it(at):
    at.session_state["fb_jump"] = "dz1"
    at.run()
    code = at.code[0].value
    assert "f_prime = relu_grad(z1)" in code and "dz1 = preact_grad(da1, f_prime)" in code
    assert "def relu_grad(z):" in code and "def preact_grad(da, act_grad):" in code
    titles = [c.proto.spec for c in at.get("plotly_chart")]
    assert any("f'(z1)" in spec for spec in titles) and not any("<b>z1</b>" in spec for spec in titles)


@pytest.mark.slow
def test_gradient_check_is_green_by_default_and_red_when_broken(at):
    assert at.success and "matches PyTorch autograd" in at.success[0].value
    assert table(at, "max |manual − autograd|")["status"].tolist() == ["pass"] * 4
    assert set(table(at, "finite difference")["status"]) == {"pass"}
    at.toggle(key="fb_break_grad").set_value(True).run()
    assert not at.exception
    assert at.error and "dW1, db1 disagree with autograd" in at.error[0].value
    assert table(at, "max |manual − autograd|")["status"].tolist() == ["FAIL", "FAIL", "pass", "pass"]
    assert "FAIL" in table(at, "finite difference")["status"].tolist()
    assert any("deliberately broken" in w.value for w in at.warning)


@pytest.mark.slow
def test_mnist_input_is_n_by_784(at):
    at.selectbox(key="fb_source").set_value("mnist").run()
    at.number_input(key="fb_n").set_value(8).run()
    assert not at.exception
    assert "784 → 5 → 10" in at.markdown[0].value
    assert len(at.image) == 1
    at.session_state["fb_jump"] = "z1"
    at.run()
    assert "(8, 784) @ (784, 5) + (5,) → (8, 5)" in shapes(at)
    tensors = table(at, "tensor").set_index("tensor")
    assert tensors.loc["X", "size"] == "(8, 784)" and tensors.loc["X", "shape"] == "(N, d_in)"


@pytest.mark.slow
def test_bad_hidden_widths_get_a_message_and_keep_the_last_network(at):
    at.text_input(key="fb_hidden").input("16, 8").run()
    assert "3 → 16 → 8 → 3" in at.markdown[0].value
    for bad, message in [
        ("16, x", "` x ` is not a whole number"),
        ("0", "between 1 and 1024"),
        ("", "Give 1 to 4"),
    ]:
        at.text_input(key="fb_hidden").input(bad).run()
        assert not at.exception
        assert message in at.sidebar.error[0].value
        assert "3 → 16 → 8 → 3" in at.markdown[0].value  # nothing lost


@pytest.mark.slow
def test_deeper_network_changes_the_steps_and_keeps_the_jump_valid(at):
    at.session_state["fb_jump"] = "db1"
    at.run()
    at.text_input(key="fb_hidden").input("6, 5, 4").run()
    assert at.session_state["fb_jump"] == "db1"
    names = at.pills(key="fb_jump").options
    assert names[:8] == ["z1", "a1", "z2", "a2", "z3", "a3", "z4", "probs"]
    # forward 7+2, Y and dz4, then dW, db, da, dz per layer; an update of each W and b, and the new loss
    assert len(names) == 7 + 2 + 2 + 4 * 4 - 2 + 2 * 4 + 1
    at.text_input(key="fb_hidden").input("7").run()
    assert at.session_state["fb_jump"] == "db1"


def test_the_walk_ends_with_the_update_and_the_loss_going_down(at):
    lesson = run_lesson(ForwardSettings(lr=0.3))
    at.select_slider(key="fb_lr").set_value(0.3).run()
    at.session_state["fb_jump"] = "W1_new"
    at.run()
    assert not at.exception and "Step 14 of 18 · update · `W1_new`" in header(at)
    assert r"W_{1}^{\text{new}} = W_{1} - \mathrm{lr} \cdot dW_{1} \\ \mathrm{lr} = 0.3" in at.latex[0].value
    assert "W1_new = sgd_update(W1, dW1, lr)  # lr = 0.3" in at.code[0].value
    assert "W1 (d_in, h1) − lr·dW1 (d_in, h1) → W1_new (d_in, h1)" in shapes(at)
    assert any("same as torch.optim.SGD" in m.value and "check_circle" in m.value for m in at.markdown)
    titles = [json.loads(c.proto.spec)["layout"]["title"]["text"] for c in at.get("plotly_chart")]
    assert [t.split(" ")[0] for t in titles[:3]] == ["<b>W1</b>", "<b>dW1</b>", "<b>W1_new</b>"]
    at.button(key="fb_next").click().run()  # b1_new, W2_new, b2_new, then the loss after the update
    for _ in range(3):
        at.button(key="fb_next").click().run()
    assert "Step 18 of 18 · update · `loss_new`" in header(at)
    before, after = (m for m in at.metric if m.label in ("loss", "loss_new"))
    assert before.value == f"{lesson.result.loss:.4f}"
    assert (
        float(after.value) < float(before.value)
        and after.value == f"{float(lesson.result.tensors['loss_new']):.4f}"
    )
    assert after.proto.delta.startswith("-")
    assert any("the loss went down" in m.value and "check_circle" in m.value for m in at.markdown)


def test_the_tour_moves_the_walk_and_can_take_the_arrow_keys(at):
    from pages.ui import forward

    for move, expected in [
        (forward.step_forward, "a1"),
        (forward.step_back, "z1"),
        (forward.step_back, "z1"),
    ]:
        with patched_state(at):
            move()
        at.run()
        assert at.session_state["fb_jump"] == expected and f"`{expected}`" in header(at)
    with patched_state(at):
        forward.go_to("loss_new")
    at.run()
    assert "Step 18 of 18" in header(at) and at.button(key="fb_next").disabled
    with patched_state(at), pytest.raises(ValueError, match="no step 'dW9'"):
        forward.go_to("dW9")
    assert at.button(key="fb_prev").proto.shortcut == "left"  # Streamlit's name for ArrowLeft


def test_on_a_tours_stop_the_arrows_are_the_tours_and_walk_the_stops_steps():
    from mlp.curriculum.tour import HOW_AN_MLP_LEARNS

    at = open_page("pages/forward_backward.py", HOW_AN_MLP_LEARNS.link(1))  # the forward pass: z1 to loss
    assert not at.button(key="fb_prev").proto.shortcut and not at.button(key="fb_next").proto.shortcut
    assert at.button(key="tour_next").proto.shortcut == "right"
    first, last = HOW_AN_MLP_LEARNS.stops[0].steps
    assert at.session_state["fb_jump"] == first
    seen = []
    while at.query_params["stop"] in ("1", ["1"]) and len(seen) < 20:
        at.button(key="tour_next").click().run()
        seen.append(at.session_state["fb_jump"])
    assert seen[:4] == ["a1", "z2", "probs", "loss"] and seen[3] == last  # then the next stop
    assert seen[-1] == HOW_AN_MLP_LEARNS.stops[1].steps[0] and not at.exception


def test_initialisation_tab_shows_he_keeps_the_scale():
    app = open_page(PAGE)
    summary = next(m.value for m in app.markdown if m.value.startswith("Across 10 relu layers"))
    assert "He keeps the scale stable" in summary


@pytest.mark.browser
def test_page_in_chromium_steps_forward_and_back(page, app_url):
    page.goto(f"{app_url}/forward_backward")
    wait_for_app(page, heading="Forward & backward, step by step")
    for expected in ("a1", "z2", "probs"):
        page.get_by_role("button", name="Next ▶").click()
        page.wait_for_selector(f"h3:has-text('`{expected}`'), h3:has-text('{expected}')")
        wait_for_app(page)
    shoot(page, "forward_backward-probs.png")
    page.get_by_role("button", name="◀ Previous").click()
    page.wait_for_selector("h3:has-text('Step 3 of 18')")
    wait_for_app(page)
    assert page.locator('[data-testid="stException"]').count() == 0
    page.get_by_role("tab", name="Gradient check").click()
    page.get_by_text("Break the gradient").click()
    wait_for_app(page)
    page.wait_for_selector("text=disagree with autograd")
    shoot(page, "forward_backward-gradcheck.png")
    assert page.locator('[data-testid="stException"]').count() == 0


# Every text drawn in the page's charts and diagrams, in px as shown: (text, size), smallest first.
DRAWN_TEXT_JS = """() => [...document.querySelectorAll('[data-testid="stMain"] svg text')]
  .filter(t => t.getBoundingClientRect().width > 0 && t.textContent.trim())
  .map(t => { const svg = t.ownerSVGElement, box = svg.viewBox && svg.viewBox.baseVal;
    const scale = box && box.width ? svg.getBoundingClientRect().width / box.width : 1;
    return [t.textContent, parseFloat(getComputedStyle(t).fontSize) * scale]; })
  .sort((a, b) => a[1] - b[1])"""


@pytest.mark.browser
def test_projector_shows_the_step_in_the_first_screen_and_arrows_step_with_focus_kept(browser, app_url):
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    tab = context.new_page()
    tab.set_default_timeout(90_000)
    tab.goto(f"{app_url}/forward_backward?present=1")
    wait_for_app(tab, heading="Forward & backward, step by step")
    tab.locator(".st-key-fb_heatmaps .stPlotlyChart svg text").first.wait_for()
    for key in ("fb_equation", "fb_heatmaps"):  # the equation, the shapes and every map: no scrolling
        box = tab.locator(f".st-key-{key}").bounding_box()
        assert box["y"] > 0 and box["y"] + box["height"] <= 720, (key, box)
    smallest = tab.evaluate(DRAWN_TEXT_JS)[0]
    assert smallest[1] >= 16, smallest

    def shows(step: int) -> None:
        tab.wait_for_selector(f"h3:has-text('Step {step} of 18')")
        wait_for_app(tab)

    next_button = tab.locator(".st-key-fb_next button")
    next_button.click()
    shows(2)
    focused = "document.activeElement.closest('.st-key-fb_next') !== null"
    assert tab.evaluate(focused)  # still on Next, not the page's top
    tab.keyboard.press("Enter")
    shows(3)
    assert tab.evaluate(focused)
    tab.keyboard.press("ArrowLeft")
    shows(2)
    tab.keyboard.press("ArrowRight")
    shows(3)
    assert tab.locator('[data-testid="stException"]').count() == 0
    context.close()
