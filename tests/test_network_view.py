"""The network view: what it draws from a run, and the drawing itself."""

import re

import numpy as np
import torch

from mlp.figures.network import hidden_space_figure, network_svg, unit_figure
from mlp.lessons.playground import Settings, make_points
from mlp.runs.network_view import MAX_UNITS, hidden_space, network_picture
from mlp.runs.playground import Playground


def run_of(**changes) -> Playground:
    settings = Settings(**changes)
    return Playground(settings, make_points(settings))


def test_the_picture_has_every_layer_with_its_first_units_and_the_weights_between_them():
    run = run_of(hidden=(128, 8, 8, 8, 8, 8, 8, 128), classes=3)
    picture = network_picture(run)
    assert picture.widths == [2, 128, 8, 8, 8, 8, 8, 8, 128, 3]
    assert [len(m) for m in picture.maps] == [2, MAX_UNITS, 8, 8, 8, 8, 8, 8, MAX_UNITS, 3]
    assert all(m.shape[1:] == (28, 28) for m in picture.maps)
    assert [w.shape for w in picture.weights][:2] == [(MAX_UNITS, 2), (8, MAX_UNITS)]
    first = run.model.layers[0].weight.detach().numpy()
    assert np.array_equal(picture.weights[0], first[:MAX_UNITS])
    assert np.allclose(picture.maps[-1].sum(axis=0), 1.0, atol=1e-5)  # the outputs: probabilities
    assert picture.labels[0] == ["x1", "x2"] and picture.labels[-1] == ["class 0", "class 1", "class 2"]


def test_dead_units_are_the_relus_that_are_zero_for_every_training_point():
    run = run_of(kind="circles", n=400, classes=2, hidden=(32, 32), optimizer="sgd", lr=3.0, epochs=500)
    run.trainer.fit()
    picture = network_picture(run)
    with torch.inference_mode():
        hidden = run.model.activations(torch.from_numpy(run.points.X_train))[:-1]
    expected = [(a[:, :MAX_UNITS] == 0).all(dim=0).numpy() for a in hidden]
    assert all(np.array_equal(d, e) for d, e in zip(picture.dead[1:-1], expected, strict=True))
    assert sum(int(d.sum()) for d in picture.dead) >= 16  # most of them, after lr = 3
    assert not picture.dead[0].any() and not picture.dead[-1].any()  # inputs and outputs never are


def test_the_drawing_has_a_tile_per_unit_and_an_edge_per_weight_shown():
    run = run_of(hidden=(40, 4), classes=3)
    p = network_picture(run)
    svg = network_svg(p.widths, p.maps, p.weights, p.dead, p.labels)
    assert svg.count("<image ") == 2 + 16 + 4 + 3
    assert svg.count("<line ") == 2 * 16 + 16 * 4 + 4 * 3
    assert "+ 24 more" in svg and "4 units" in svg
    widths = [float(w) for w in re.findall(r'stroke-width="([\d.]+)"', svg) if w != "2"]
    assert max(widths) == 4.4  # the largest weight of each layer pair at full width


def test_with_l1_the_view_counts_the_weights_at_exactly_zero_and_draws_them_dashed():
    assert network_picture(run_of(hidden=(8, 8))).zeros == ""  # no L1, no zeros: nothing to say
    run = run_of(
        kind="circles", n=400, classes=2, hidden=(8, 8), optimizer="sgd", lr=0.3, batch_size=32, l1=0.01
    )
    assert network_picture(run).zeros == "0 of 96 weights are exactly 0 (drawn dashed)."  # L1 on: said
    for _ in range(40):
        run.trainer.run_epoch()
    p = network_picture(run)
    zeros = sum(int((layer.weight == 0).sum()) for layer in run.model.layers)
    assert zeros >= 20 and p.zeros == f"{zeros} of 96 weights are exactly 0 (drawn dashed)."
    svg = network_svg(p.widths, p.maps, p.weights, p.dead, p.labels)
    assert svg.count("stroke-dasharray") == zeros == sum(int((w == 0).sum()) for w in p.weights)
    assert svg.count("<line ") == 96  # an edge still, dashed: where a connection was


def test_the_hidden_space_view_is_there_only_for_a_two_unit_last_layer():
    assert hidden_space(run_of(hidden=(16, 8))) is None and hidden_space(run_of(hidden=())) is None
    run = run_of(kind="moons", n=400, classes=2, hidden=(16, 2))
    space = hidden_space(run)
    assert space.points.shape == (len(run.points.y_train), 2) and space.probs.shape == (80, 80, 2)
    assert len(space.lines) == 18 and all(line.shape == (60, 2) for line in space.lines)
    fig = hidden_space_figure(space.points, space.labels, space.probs, space.extent, space.lines)
    assert fig.layout.title.text and len(fig.layout.images) == 1
    unit = unit_figure(network_picture(run).maps[1][0], run.points.extent, "layer 1, unit 1")
    assert unit.layout.title.text.startswith("layer 1, unit 1: from")


def test_the_clickable_drawing_keeps_the_picture_and_adds_a_button_per_unit_and_a_target_per_edge():
    run = run_of(hidden=(40, 4), classes=3)
    p = network_picture(run)
    plain = network_svg(p.widths, p.maps, p.weights, p.dead, p.labels)
    svg = network_svg(p.widths, p.maps, p.weights, p.dead, p.labels, interactive=True, selected=(2, 1))
    picture = svg[svg.index('role="img"') :]
    assert plain[plain.index('role="img"') :] in picture  # the same picture, inside
    assert svg.startswith("<svg") and 'role="group"' in svg[:300]
    assert svg.count('class="unit" role="button" tabindex="0"') == 16 + 4 + 3  # hidden and outputs
    assert svg.count('class="edge"') == 2 * 16 + 16 * 4 + 4 * 3
    assert 'data-edge="2,3,15"' in svg and 'data-edge="1,0,1"' in svg
    pressed = re.findall(r'aria-pressed="true" aria-label="([^"]+)"', svg)
    assert pressed == ["layer 2, unit 2"]
    assert 'aria-label="output: class 2"' in svg
