"""A unit up close (mlp.runs.units): its computation's numbers are the model's own forward pass,
and a weight set by hand moves the predictions, the numbers above the plane, and comes back."""

import math

import numpy as np
import pytest
import torch

from mlp.data.features import with_features
from mlp.lessons.playground import Settings, make_points
from mlp.runs.playground import Playground
from mlp.runs.units import (
    MAX_FEEDS,
    Edge,
    parse_weight,
    reset_weight,
    set_weight,
    trained_value,
    unit_computation,
    unit_name,
    unit_plane,
    weight,
)
from mlp.train import evaluate
from mlp.train.penalty import penalty_of


def run_of(**changes) -> Playground:
    settings = Settings(**changes)
    run = Playground(settings, make_points(settings))
    run.run(20)
    return run


def forward(run: Playground, point) -> list[torch.Tensor]:
    with torch.inference_mode():
        x = with_features(torch.tensor([point], dtype=torch.float32), run.settings.features)
        return [a[0] for a in run.model.activations(x)]


@pytest.mark.parametrize(
    "activation, features",
    [("relu", ()), ("tanh", ()), ("tanh", ("x1sq", "x1x2", "sinx2")), ("relu", ("x2sq",))],
)
def test_every_number_of_a_units_computation_is_the_models_forward_pass(activation, features):
    run = run_of(hidden=(6, 4), activation=activation, features=features, classes=3)
    point = (0.4, -0.9)
    outputs = forward(run, point)
    for layer, j in [(1, 2), (2, 3), (3, 1)]:
        c = unit_computation(run, (layer, j), point)
        u = c.unit
        assert len(u.terms) == run.model.layers[layer - 1].in_features
        assert math.isclose(sum(t.wa for t in u.terms) + u.b, u.z, abs_tol=1e-5)
        if layer == 1:
            inputs = with_features(torch.tensor([point]), features)[0]
            assert np.allclose([t.a for t in u.terms], inputs.numpy(), atol=1e-6)
        else:
            assert np.allclose([t.a for t in u.terms], outputs[layer - 2].numpy(), atol=1e-6)
        W = run.model.layers[layer - 1].weight.detach()
        assert [t.w for t in u.terms] == pytest.approx(W[j].tolist())
        if layer < 3:
            assert u.f == activation and math.isclose(u.a, float(outputs[layer - 1][j]), abs_tol=1e-6)
            assert {f.name for f in c.feeds} <= {unit_name(run, (layer + 1, k)) for k in range(6)}
            for f in c.feeds:
                assert math.isclose(f.wa, f.w * u.a, abs_tol=1e-9)
        else:  # the output: z is the logit, a its class's probability
            assert u.f == "softmax" and math.isclose(u.z, float(outputs[-1][j]), abs_tol=1e-5)
            assert math.isclose(u.a, float(torch.softmax(outputs[-1], 0)[j]), abs_tol=1e-6)
        assert np.allclose(c.logits, outputs[-1].numpy(), atol=1e-5)
        assert np.allclose(c.probs, torch.softmax(outputs[-1], 0).numpy(), atol=1e-6)


def test_a_regressions_output_unit_is_its_value_not_a_probability():
    run = run_of(kind="reg-gauss", classes=2, hidden=(6,), activation="tanh")  # classes: unused
    point = (0.3, -0.6)
    value = forward(run, point)[-1][0].item()  # the model's output: ŷ = z, no softmax
    out = unit_computation(run, (2, 0), point)
    assert unit_name(run, (2, 0)) == "output: ŷ" and out.unit.f == "identity"
    assert out.unit.a == pytest.approx(value, abs=1e-6) and out.unit.z == pytest.approx(value, abs=1e-6)
    hidden = unit_computation(run, (1, 2), point)
    assert hidden.next_f == "identity" and hidden.feeds[0].a == pytest.approx(value, abs=1e-6)
    assert hidden.logits == hidden.probs == pytest.approx([value], abs=1e-6)
    plane = unit_plane(run, (2, 0))  # the output's map: the value over the grid
    assert plane.min() < 0 < plane.max() or plane.std() > 0


def test_a_wide_layer_shows_its_largest_contributions_first():
    run = run_of(hidden=(3, 20))
    c = unit_computation(run, (1, 0), (0.5, 0.5))
    assert len(c.feeds) == MAX_FEEDS and c.more_feeds == 20 - MAX_FEEDS
    sizes = [abs(f.wa) for f in c.feeds]
    assert sizes == sorted(sizes, reverse=True)


def test_a_units_plane_is_its_output_over_the_grid():
    run = run_of(hidden=(5,), activation="relu")
    plane = unit_plane(run, (1, 3))
    assert plane.shape == (run.view.grid.res, run.view.grid.res)
    with torch.inference_mode():
        expected = run.model.activations(run.view.grid.inputs)[0][:, 3].reshape(run.view.grid.res, -1).numpy()
    assert np.array_equal(plane, expected) and (plane >= 0).all()
    total = sum(unit_plane(run, (2, k)) for k in range(run.points.classes))
    assert np.allclose(total, 1.0, atol=1e-5)  # the outputs: probabilities
    assert (
        unit_name(run, (3, 0)) is None and unit_name(run, (1, 5)) is None and unit_name(run, (0, 0)) is None
    )


def test_setting_a_weight_moves_the_predictions_and_the_numbers_and_reset_brings_it_back():
    run = run_of(hidden=(4,), classes=2)
    edge = Edge(2, 1, 2)  # into the output "class 1" from hidden unit 3
    point = (0.2, 0.3)
    trained, before = weight(run, edge), unit_computation(run, (2, 1), point)
    numbers = dict(run.view.live_metrics())
    a = unit_computation(run, (1, 2), point).unit.a
    set_weight(run, edge, trained + 2.0)
    after = unit_computation(run, (2, 1), point)
    assert math.isclose(after.unit.z - before.unit.z, 2.0 * a, abs_tol=1e-5)  # the logit moves by Δw · a
    assert weight(run, edge) == pytest.approx(trained + 2.0) and trained_value(run, edge) == trained
    assert dict(run.view.live_metrics())["Train loss"] != numbers["Train loss"]  # measured anew, at once
    assert run.trainer.step_count == 20  # nothing trained
    set_weight(run, edge, -5.0)  # a second edit: Reset still goes back to the trained value
    assert reset_weight(run, edge) and weight(run, edge) == trained and trained_value(run, edge) is None
    assert dict(run.view.live_metrics()) == numbers  # nothing trained since: the record's numbers again
    assert np.allclose(unit_computation(run, (2, 1), point).probs, before.probs)
    assert not reset_weight(run, edge)


def test_an_edited_runs_train_loss_keeps_the_penalty_training_counts():
    run = run_of(hidden=(4,), classes=2, l1=0.01, l2=0.01)
    edge = Edge(1, 0, 1)
    set_weight(run, edge, weight(run, edge))  # its own value: only the way of measuring changes
    shown = float(dict(run.view.live_metrics())["Train loss"])
    data_loss = evaluate(run.model, run.inputs.X_train, run.inputs.y_train)[0]
    penalty = penalty_of(run.model, 0.01, 0.01)
    assert penalty > 0.01 and shown == pytest.approx(data_loss + penalty, abs=1e-3)  # as the curve's


@pytest.mark.parametrize(
    ("text", "says"),
    [("", "Type the weight's new value"), ("nan", "finite number"), ("inf", "finite"), ("1e6", "between")],
)
def test_a_weights_message_says_what_was_wrong(text, says):
    with pytest.raises(ValueError, match=says):
        parse_weight(text)


def test_with_the_twin_on_a_weight_is_set_in_both_networks():
    run = run_of(hidden=(4,))
    run.compare(True)
    edge = Edge(1, 0, 1)
    set_weight(run, edge, 0.75)
    assert float(run.twin.model.layers[0].weight.detach()[0, 1]) == 0.75
    reset_weight(run, edge)
    twin, own = run.twin.model.layers[0].weight.detach(), run.model.layers[0].weight.detach()
    assert float(twin[0, 1]) == float(own[0, 1])


def test_a_runs_reset_forgets_the_edits():
    run = run_of(hidden=(4,))
    edge = Edge(1, 0, 0)
    set_weight(run, edge, 1.5)
    run.reset()
    assert trained_value(run, edge) is None
    assert dict(run.view.live_metrics())["Train loss"] == "–"  # a fresh run: nothing measured yet


@pytest.mark.parametrize("text", ["abc", "nan", "inf", "1e9", "", "-101"])
def test_a_bad_weight_is_refused_with_a_sentence(text):
    with pytest.raises(ValueError, match="number"):
        parse_weight(text)
    run = run_of(hidden=(4,))
    with pytest.raises(ValueError, match=r"no such weight|no layer"):
        set_weight(run, Edge(1, 9, 0), 1.0)


def test_a_typed_weight_may_use_a_comma_or_a_true_minus():
    assert parse_weight(" −0,5 ") == -0.5 and parse_weight("2") == 2.0


def test_after_training_on_from_an_edit_reset_puts_the_weight_back_and_the_numbers_stay_measured():
    run = run_of(hidden=(4,), batch_size=32)
    edge = Edge(1, 2, 0)
    set_weight(run, edge, 3.0)
    run.run(1)  # within the epoch: its record is the one before the edit
    assert reset_weight(run, edge)
    shown = dict(run.view.live_metrics())
    last = run.trainer.history.epochs[-1]
    assert last.step < run.trainer.step_count and shown["Train loss"] != f"{last.train_loss:.4f}"
