"""The lesson behind the step-by-step page: settings, batches, shapes, checks, tables, init spread."""

import math

import numpy as np
import pytest

from mlp.figures.diagrams import shape_lines, shape_svg
from mlp.figures.tensors import number_text, tensor_heatmap
from mlp.lessons.checks import gradient_report, step_checks
from mlp.lessons.forward_backward import (
    SPREAD_WIDTHS,
    VIEW_SPECS,
    WIDTHS,
    ForwardSettings,
    ForwardView,
    from_query,
    make_batch,
    operands,
    run_lesson,
    to_query,
)
from mlp.lessons.init_spread import activation_spread, spread_summary
from mlp.lessons.shapes import shape_story
from mlp.lessons.tables import layer_table, tensor_table
from mlp.manual import same_in_both, shape_text, step_code


@pytest.mark.parametrize(("text", "widths"), [("5", (5,)), ("256, 128", (256, 128)), (" 8;4 2 ", (8, 4, 2))])
def test_hidden_widths_read_what_people_type(text, widths):
    assert WIDTHS.parse(text) == widths


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "Give 1 to 4"),
        ("1.5", "not a whole number"),
        ("0", "between 1 and 1024"),
        ("1,2,3,4,5", "Use 1 to 4 hidden layers"),
    ],
)
def test_hidden_widths_explain_what_is_wrong(text, message):
    with pytest.raises(ValueError, match=message):
        WIDTHS.parse(text)


def test_the_settings_round_trip_through_a_link():
    settings = ForwardSettings(n=7, d_in=5, hidden=(6, 5, 4), k=4, activation="tanh", source="toy", seed=3)
    assert from_query(to_query(settings)) == (settings, [])


@pytest.mark.parametrize(
    ("source", "shape", "k"), [("gaussian", (6, 3), 3), ("toy", (6, 2), 3), ("mnist", (6, 784), 10)]
)
def test_batches_have_their_shapes_and_repeat_with_the_seed(source, shape, k):
    cfg = ForwardSettings(n=6, source=source, toy_kind="spiral", k=3)
    batch = make_batch(cfg)
    assert batch.X.shape == shape and batch.X.dtype == np.float32 and batch.k == k
    assert np.array_equal(make_batch(cfg).X, batch.X)
    assert batch.y.max() < batch.k
    if source == "mnist":
        assert batch.images.shape == (6, 28, 28) and batch.X.min() >= 0 and batch.X.max() <= 1


def test_bad_config_is_refused_with_the_range():
    with pytest.raises(ValueError, match="n must be between 1 and 1024; got 0"):
        ForwardSettings(n=0)
    with pytest.raises(ValueError, match="Use 1 to 4 hidden layers"):
        ForwardSettings(hidden=())


def test_symbols_name_every_tensor():
    lesson = run_lesson(ForwardSettings(hidden=(5, 4)))
    expected = {"X": ("N", "d_in"), "W1": ("d_in", "h1"), "b2": ("h2",), "W3": ("h2", "K")}
    expected |= {"z2": ("N", "h2"), "dz3": ("N", "K"), "da1": ("N", "h1"), "loss": (), "Y": ("N", "K")}
    for name, symbols in expected.items():
        assert lesson.symbols(name) == symbols, name
    assert shape_text(("N",)) == "(N,)" and shape_text(()) == "()"


def test_every_step_tells_a_shape_story_that_ends_in_its_own_shape():
    lesson = run_lesson(ForwardSettings(n=4, hidden=(5, 6)))
    for step in lesson.steps:
        story = shape_story(lesson, step)
        assert story.result.shape == step.shape, step.name
        assert story.sentence and len(story.operators) >= 1
        svg = shape_svg(story)
        assert svg.startswith("<svg") and svg.endswith("</svg>")
        assert f"→ {shape_text(step.shape)}</div>" in shape_lines(story), step.name
    affine = shape_story(lesson, lesson.result.step("z2"))
    assert affine.inner == "h1" and affine.broadcast == "b2"
    assert [o.shape for o in affine.operands] == [(4, 5), (5, 6), (6,)]
    weight = shape_story(lesson, lesson.result.step("dW2"))
    assert weight.inner == "N" and weight.operands[0].name == "a1ᵀ" and weight.operands[0].shape == (5, 4)


def test_checks_pass_on_a_sound_pass():
    lesson = run_lesson(ForwardSettings(n=16, hidden=(32,)))
    for step in lesson.steps:
        assert all(c.ok in (True, None) for c in step_checks(lesson, step)), step.name
    loss_notes = step_checks(lesson, lesson.result.step("loss"))
    assert any(f"ln 3 = {math.log(3):.4f}" in c.detail for c in loss_notes)
    dead = [c for c in step_checks(lesson, lesson.result.step("a1")) if c.label == "dead units"]
    assert dead and dead[0].ok is None


def test_tables_count_parameters_flops_and_bytes():
    lesson = run_lesson(ForwardSettings(n=8, d_in=3, hidden=(5,), k=2))
    layers = layer_table(lesson.widths, 8)
    assert [r["parameters"] for r in layers] == [(3 + 1) * 5, (5 + 1) * 2]
    assert layers[0]["forward FLOPs"] == 2 * 8 * 3 * 5 and layers[0]["formula"] == "(3 + 1) × 5"
    rows = {r["tensor"]: r for r in tensor_table(lesson)}
    assert rows["W1"]["bytes"] == 3 * 5 * 4 and rows["W1"]["role"] == "parameter"
    assert rows["dW1"]["role"] == "gradient" and rows["z1"]["role"] == "activation"
    assert rows["X"]["shape"] == "(N, d_in)" and rows["b1"]["size"] == "(5,)"


def test_gradient_report_is_green_and_turns_red_when_broken():
    assert gradient_report(run_lesson(ForwardSettings())).ok
    broken = gradient_report(run_lesson(ForwardSettings(break_grad=True)))
    assert not broken.ok
    assert [r["status"] for r in broken.autograd_rows()] == ["FAIL", "FAIL", "pass", "pass"]


def test_he_init_keeps_relu_activations_stable_and_small_init_collapses():
    spread = activation_spread(depth=10, width=256)
    he, xavier, small = (spread[k] for k in ("kaiming", "xavier", "normal"))
    assert 0.5 < he[-1] / he[0] < 2
    assert xavier[-1] / xavier[0] < 0.1 and small[-1] < 1e-5
    assert "He keeps the scale stable" in spread_summary(spread, "relu")
    tanh = activation_spread(activation="tanh", depth=10, width=256)
    assert "Xavier" in spread_summary(tanh, "tanh")


def test_the_deepest_widest_initialisation_stack_the_page_offers_can_be_built():
    depth, width = VIEW_SPECS["spread_depth"].high, max(SPREAD_WIDTHS)  # the slider's ends
    spread = activation_spread(depth=depth, width=width, n=8)
    assert all(len(stds) == depth for stds in spread.values())
    with pytest.raises(ValueError, match="between 4 and 16"):
        ForwardView(spread_depth=depth + 1)


def test_each_hidden_dz_reads_the_activations_derivative_as_its_own_operand():
    lesson = run_lesson(ForwardSettings(hidden=(5, 4), activation="relu"))
    step = lesson.result.step("dz1")
    assert operands(step) == ["da1", "f'(z1)", "dz1"]
    tensors = lesson.passes["numpy"].tensors
    np.testing.assert_array_equal(tensors["f'(z1)"], (tensors["z1"] > 0).astype(np.float32))  # the mask
    np.testing.assert_allclose(tensors["dz1"], tensors["da1"] * tensors["f'(z1)"])
    assert lesson.symbols("f'(z1)") == lesson.symbols("z1")


def test_the_code_shown_is_the_code_that_ran_with_its_arguments():
    lesson = run_lesson(ForwardSettings(hidden=(5,), activation="tanh"))
    code = step_code(lesson.result.step("dz1"), "torch", "tanh")
    assert "f_prime = tanh_grad(z1)" in code and "def tanh_grad(z):" in code
    broken = step_code(lesson.result.step("dz1"), "numpy", "tanh", break_grad=True)
    assert "f_prime = 1 - tanh_grad(z1)" in broken
    assert "z2 = affine(a1, W2, b2)" in step_code(lesson.result.step("z2"), "numpy", "tanh")
    same = [s.name for s in lesson.steps if same_in_both(s.op, "relu")]
    # affine, the activation and its derivative (one code, xp(z) the array's namespace), dlogits,
    # weight_grad, input_grad, preact_grad, sgd_update; softmax, cross-entropy, one-hot and the
    # bias's sum are spelled each library's way
    assert same == [
        "z1",
        "a1",
        "z2",
        "dz2",
        "dW2",
        "da1",
        "dz1",
        "dW1",
        "W1_new",
        "b1_new",
        "W2_new",
        "b2_new",
    ]
    assert "def tanh(z):\n    return xp(z).tanh(z)" in step_code(lesson.result.step("a1"), "torch", "tanh")
    update = step_code(lesson.result.step("W2_new"), "numpy", "tanh")
    assert "W2_new = sgd_update(W2, dW2, lr)  # lr = 0.1" in update and "return param - lr * grad" in update
    again = step_code(lesson.result.step("loss_new"), "torch", "tanh")
    assert "a1_new = tanh(z1_new)\nz2_new = affine(a1_new, W2_new, b2_new)" in again
    assert "loss_new = cross_entropy(z2_new, y)" in again


@pytest.mark.parametrize("source", ["gaussian", "toy", "teacher", "mnist"])
def test_the_walk_ends_with_an_update_that_lowers_the_loss(source):
    for seed in range(4):
        lesson = run_lesson(ForwardSettings(source=source, n=8, hidden=(6, 5), seed=seed, lr=0.1))
        names = [s.name for s in lesson.steps]
        assert names[-7:] == ["W1_new", "b1_new", "W2_new", "b2_new", "W3_new", "b3_new", "loss_new"]
        t = lesson.result.tensors
        for p in ("W1", "b1", "W2", "b2", "W3", "b3"):
            assert np.array_equal(t[f"{p}_new"], t[p] - np.float32(0.1) * t[f"d{p}"]), p
            assert lesson.result.step(f"{p}_new").phase == "update"
        after, before = float(t["loss_new"]), lesson.result.loss
        assert after < before, (source, seed, before, after)
        checks = {
            c.label: c for s in ("W1_new", "loss_new") for c in step_checks(lesson, lesson.result.step(s))
        }
        assert checks["same as torch.optim.SGD"].ok and checks["the loss went down"].ok
        story = shape_story(lesson, lesson.result.step("loss_new")).sentence
        assert f"went down, from {before:.4f} to {after:.4f}" in story
        assert operands(lesson.result.step("loss_new")) == ["loss", "loss_new"]
        assert operands(lesson.result.step("W2_new")) == ["W2", "dW2", "W2_new"]


def test_the_update_shows_its_lr_in_the_equation_and_the_shapes():
    lesson = run_lesson(ForwardSettings(lr=0.3))
    step = lesson.result.step("W1_new")
    assert step.formula == r"W_{1}^{\text{new}} = W_{1} - \mathrm{lr} \cdot dW_{1},\quad \mathrm{lr} = 0.3"
    story = shape_story(lesson, step)
    assert "W1 (d_in, h1) − lr·dW1 (d_in, h1) → W1_new (d_in, h1)" in shape_lines(story)
    assert "lr = 0.3" in story.sentence
    assert lesson.symbols("W1_new") == ("d_in", "h1") and lesson.symbols("z2_new") == ("N", "K")
    assert to_query(ForwardSettings(lr=0.3))["lr"] == "0.3"


def test_labels_print_as_integers_in_categories_and_no_value_prints_minus_zero():
    lesson = run_lesson(ForwardSettings(n=6, k=3, seed=1))
    labels = tensor_heatmap(np.asarray(lesson.result.tensors["y"]), "y", ("N",)).data[0]
    assert list(labels.text[0]) == [str(v) for v in lesson.batch.y]
    assert labels.showscale is False and labels.zmin == -0.5 and labels.zmax == 2.5  # a band per class
    one_hot = tensor_heatmap(np.asarray(lesson.result.tensors["Y"]), "Y", ("N", "K"))
    assert {v for row in one_hot.data[0].text for v in row} == {"0", "1"}
    assert "0/1" in one_hot.layout.title.text and one_hot.data[0].colorscale[-1][1] == "#0072B2"
    signed = np.array([[-0.0, -0.001, 0.004, -1.5], [0.0, -0.0049, 2.0, 1e-9]], dtype=np.float32)
    cells = tensor_heatmap(signed, "dz1", ("N", "h1")).data[0]
    texts = [v for row in cells.text for v in row] + [v for row in cells.customdata for v in row]
    assert "-0.00" not in texts and "-0" not in texts and texts[:4] == ["0.00", "0.00", "0.00", "-1.50"]
    assert (
        number_text(-0.004) == "0.00" and number_text(-0.005) == "-0.01" and number_text(-0.0, ".3g") == "0"
    )
    for step in lesson.steps:  # every figure of the walk: not one "-0.00"
        for name in operands(step):
            value = np.asarray(lesson.result.tensors[name])
            if value.ndim:
                fig = tensor_heatmap(value, name, lesson.symbols(name))
                assert "-0.00" not in str(fig.data[0].text) and "[-0," not in fig.layout.title.text
