"""Regression in the 2D playground, through the library: the data sets, CSV values, MSE and R²,
both engines, what the plane and the numbers show, links and presets."""

import math
from dataclasses import replace

import numpy as np
import pytest
import torch

from mlp.curriculum.challenges import playground_scores
from mlp.data import make_2d, points_csv, read_points_csv, split, task_of
from mlp.data.toy import GAUSSIANS, TF_RADIUS
from mlp.figures.curves import epoch_curves_figure
from mlp.figures.plane import boundary_image, plane_points, value_colors, value_rgba, value_stop
from mlp.lessons.playground import PRESETS, Settings, from_query, make_points, to_query
from mlp.metrics import mse, r2_score
from mlp.model import MLP
from mlp.runs.network_view import hidden_space, network_picture
from mlp.runs.playground import Playground, current_run
from mlp.train import TrainConfig, Trainer, evaluate

PRESET = PRESETS["regression"]


def tf_gauss_label(x: float, y: float) -> float:
    """TensorFlow Playground's regressGaussian getLabel (src/dataset.ts), in its own ±6 units."""
    label = 0.0
    for cx, cy, sign in GAUSSIANS:
        value = sign * min(1.0, max(0.0, 1 - math.hypot(x - cx, y - cy) / 2))
        if abs(value) > abs(label):
            label = value
    return label


@pytest.mark.parametrize("seed", range(3))
def test_the_regression_sets_are_tf_playgrounds_seeded_and_real_valued(seed):
    X, y = make_2d("reg-plane", 300, noise=0.0, seed=seed)
    assert X.dtype == np.float32 and y.dtype == np.float32 and np.abs(X).max() <= 1.5
    np.testing.assert_allclose(y, (X[:, 0] + X[:, 1]) * (TF_RADIUS / 1.5) / 10, atol=1e-5)  # (x + y)/10
    X, y = make_2d("reg-gauss", 300, noise=0.0, seed=seed)
    expected = [tf_gauss_label(*(p * TF_RADIUS / 1.5)) for p in X.astype(np.float64)]
    np.testing.assert_allclose(y, expected, atol=1e-5)
    assert y.min() < -0.5 and y.max() > 0.5 and (y == 0).any()  # bumps of both signs, flat between
    again = make_2d("reg-gauss", 300, noise=0.3, seed=seed)
    assert all(
        np.array_equal(a, b) for a, b in zip(again, make_2d("reg-gauss", 300, 0.3, seed=seed), strict=True)
    )
    assert not np.array_equal(again[1], y)  # noise moves where a label is read
    assert task_of("reg-gauss") == task_of("reg-plane") == "regress" and task_of("spiral") == "classify"


def test_a_regression_split_is_random_and_keeps_the_values():
    X, y = make_2d("reg-plane", 100, seed=1)
    (_, y_train), (_, y_test) = split(X, y, 0.2, seed=1)
    assert len(y_test) == 20 and y_train.dtype == np.float32
    assert sorted(np.concatenate([y_train, y_test]).tolist()) == sorted(y.tolist())


def csv(rows: list[str], header: str = "x1,x2,value") -> bytes:
    return ("\n".join([header, *rows]) + "\n").encode()


def test_a_csv_with_a_value_column_is_a_regression_and_round_trips():
    points = read_points_csv(csv([f"{i},{i % 3},{0.1 * i - 0.5}" for i in range(12)]))
    assert points.classes == 1 and points.y.dtype == np.float32 and "regression" in points.note
    np.testing.assert_allclose(points.y, [0.1 * i - 0.5 for i in range(12)], atol=1e-6)
    big = read_points_csv(csv([f"{i},{-i},{10 * i}" for i in range(12)]))
    assert big.y.max() == pytest.approx(1.0) and "divided by 110" in big.note
    original = make_points(PRESET)
    again = read_points_csv(points_csv(original).encode())
    assert points_csv(original).startswith("x1,x2,value") and again.classes == 1
    np.testing.assert_allclose(again.y, np.concatenate([original.y_train, original.y_test]), atol=1e-5)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (csv([f"{i},{i},0.25" for i in range(12)]), "Every point has value 0.25: there is nothing to fit"),
        (csv([f"{i},{i},{i / 3}" for i in range(12)], header="x1,x2,label"), "name the column value"),
        (csv([f"{i},{i},abc" for i in range(12)]), "column value, has 'abc'"),
        (csv([f"{i},{i},{i}" for i in range(12)], header="x1,x2,target"), "x1, x2, value"),
    ],
)
def test_bad_regression_csvs_say_what_is_wrong(data, message):
    with pytest.raises(ValueError, match=message):
        read_points_csv(data)


def test_mse_and_r2():
    y = np.array([1.0, 2.0, 3.0, 4.0])
    assert mse(y, y + 0.5) == 0.25 and r2_score(y, y) == 1.0 and r2_score(y, np.full(4, 2.5)) == 0.0
    assert r2_score(y, y[::-1]) == pytest.approx(1 - 20 / 5) and math.isnan(r2_score(np.ones(3), y[:3]))


def test_evaluate_gives_the_mse_and_r2_of_the_one_output():
    X, y = make_2d("reg-plane", 200, seed=0)
    model = MLP(2, [], 1, seed=0)
    predicted = model(torch.from_numpy(X))[:, 0].detach().double().numpy()
    loss, r2 = evaluate(model, X, y, loss="mse")
    assert loss == pytest.approx(mse(y, predicted), rel=1e-6) and r2 == pytest.approx(r2_score(y, predicted))


@pytest.mark.parametrize("engine", ["autograd", "manual"])
def test_both_engines_fit_the_plane_and_report_mse_and_r2(engine):
    X, y = make_2d("reg-plane", 200, noise=0.0, seed=0)
    cfg = TrainConfig(lr=0.03, epochs=300, batch_size=200, engine=engine, loss="mse", device="cpu")
    history = Trainer(MLP(2, [], 1, seed=0), (X, y), (X, y), cfg).fit()
    last = history.epochs[-1]
    assert last.val_loss < 1e-3 and last.val_acc > 0.99 and math.isnan(last.train_acc)  # R²; no accuracy


def test_the_mse_loss_wants_one_output():
    X, y = make_2d("reg-plane", 50, seed=0)
    with pytest.raises(ValueError, match=r"The MSE loss fits one output .* this network has 2"):
        Trainer(MLP(2, [], 2), (X, y), cfg=TrainConfig(loss="mse", device="cpu"))
    with pytest.raises(ValueError, match="Unknown loss 'l1'; choose one of cross_entropy, mse"):
        TrainConfig(loss="l1")


def test_the_engines_agree_on_a_regression_in_lockstep():
    run = current_run(None, replace(PRESET, engine="manual", optimizer="sgd", lr=0.1))
    run.compare(True)
    run.run(100)
    gap = run.view.engine_gap()
    assert gap["loss"] < 1e-5 and gap["weights"] < 1e-4


def test_the_run_shows_values_mse_and_r2_and_no_confusion():
    run = Playground(PRESET, make_points(PRESET))
    assert run.points.task == "regress" and run.model.config.d_out == 1 and run.trainer.cfg.loss == "mse"
    run.run(200)
    frame = run.view.live_frame()
    labels = [label for label, _ in frame.metrics]
    assert labels == ["Epoch", "Step", "Train MSE", "Test MSE", "Test R²"]
    assert frame.shade.values is not None and float(dict(frame.metrics)["Test R²"]) > 0.3
    assert run.view.confusion() is None
    scores = playground_scores(run.trainer.history)  # R² in the accuracy slot: the page skips them
    assert len(scores) == 200
    picture = network_picture(run)
    assert picture.labels[-1] == ["ŷ"] and picture.maps[-1].min() < 0  # the output itself, no softmax
    assert hidden_space(replace_hidden(run)) is None


def replace_hidden(run: Playground) -> Playground:
    settings = replace(run.settings, hidden=(8, 2))
    return Playground(settings, run.points)


def test_the_plane_shades_values_and_colours_points_on_one_scale():
    values = np.linspace(-1.5, 1.5, 7, dtype=np.float32).reshape(1, 7, 1)
    rgba = value_rgba(values)
    assert rgba[0, 3, 3] == 0 and rgba[0, 0, 3] == rgba[0, 1, 3] == rgba[0, -1, 3] > 0  # clear at 0
    assert tuple(rgba[0, 0, :3]) != tuple(rgba[0, -1, :3])  # blue below, orange above
    assert boundary_image(values).startswith("data:image/png;base64,")
    colors = value_colors()
    assert value_stop(np.array([-5.0, 0.0, 1.0])).tolist() == [0, len(colors) // 2, len(colors) - 1]
    view = plane_points(make_points(PRESET))
    assert view["colors"] == colors and view["scale"]["low"] == -1 and view["scale"]["high"] == 1
    assert all(0 <= row[2] < len(colors) and row[2] == int(row[2]) for row in view["train"])
    assert "scale" not in plane_points(make_points(PRESETS["spiral"]))


def test_the_curves_show_mse_and_r2():
    run = Playground(PRESET, make_points(PRESET))
    run.run(5)
    figure = epoch_curves_figure(run.view.curves(), regress=True, height=300)
    texts = [a.text for a in figure.layout.annotations]
    assert "<b>R²</b> ↑" in texts and "MSE" in figure.layout.yaxis.title.text


def test_the_regression_preset_round_trips_through_its_link_and_hides_classes():
    assert from_query(to_query(PRESET)) == (PRESET, [])
    settings, notes = from_query({"data": "reg-plane", "classes": "4"})
    assert (
        settings.kind == "reg-plane"
        and settings.classes == 2
        and [n.reason for n in notes] == ["this data set is a regression: it has no classes"]
    )
    with pytest.raises(ValueError, match="is a regression: it has no classes"):
        Settings(kind="reg-gauss", classes=3)
    assert (
        PRESET.train_config(100, "regress").loss == "mse"
        and PRESET.train_config(100, "classify").loss == "cross_entropy"
    )
