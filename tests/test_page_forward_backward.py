"""The forward & backward page: AppTest drives the controls; Chromium renders it."""

import pytest

from mlp.lessons.forward_backward import ForwardSettings, run_lesson
from tests.conftest import open_page, shoot, wait_for_app

PAGE = "pages/forward_backward.py"
TWO_LAYER_STEPS = ["z1", "a1", "z2", "probs", "loss", "Y", "dz2", "dW2", "db2", "da1", "dz1", "dW1", "db1"]


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


@pytest.mark.slow
def test_next_walks_every_forward_and_backward_step_and_previous_walks_back(at):
    assert at.button(key="fb_prev").disabled  # nothing before the first step
    seen = [at.session_state["fb_jump"]]
    for _ in range(len(TWO_LAYER_STEPS) - 1):
        assert f"`{seen[-1]}`" in header(at)
        at.button(key="fb_next").click().run()
        assert not at.exception
        seen.append(at.session_state["fb_jump"])
    assert seen == TWO_LAYER_STEPS
    assert "Step 13 of 13 · backward" in header(at)
    assert at.button(key="fb_next").disabled and not at.button(key="fb_prev").disabled  # the end
    at.button(key="fb_prev").click().run()
    assert at.session_state["fb_jump"] == "dW1"


@pytest.mark.slow
def test_shapes_shown_match_the_tensors(at):
    lesson = run_lesson(ForwardSettings(n=4, d_in=3, hidden=(5,), k=3))
    for name in TWO_LAYER_STEPS:
        at.session_state["fb_jump"] = name
        at.run()
        step = lesson.result.step(name)
        drawing = svg(at)
        expected = "(" + ", ".join(str(s) for s in step.shape) + ("," if len(step.shape) == 1 else "") + ")"
        assert f"→ {expected}" in drawing, (name, expected)
    at.session_state["fb_jump"] = "z1"
    at.run()
    assert "(4, 3) @ (3, 5) + (5,) → (4, 5)" in svg(at)
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
    assert "(8, 784) @ (784, 5) + (5,) → (8, 5)" in svg(at)
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
    assert len(names) == 7 + 2 + 2 + 4 * 4 - 2  # forward 7+2, Y and dz4, then dW, db, da, dz per layer
    at.text_input(key="fb_hidden").input("7").run()
    assert at.session_state["fb_jump"] == "db1"


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
    page.wait_for_selector("h3:has-text('Step 3 of 13')")
    wait_for_app(page)
    assert page.locator('[data-testid="stException"]').count() == 0
    page.get_by_role("tab", name="Gradient check").click()
    page.get_by_text("Break the gradient").click()
    wait_for_app(page)
    page.wait_for_selector("text=disagree with autograd")
    shoot(page, "forward_backward-gradcheck.png")
    assert page.locator('[data-testid="stException"]').count() == 0
