"""mlp.playground and mlp.plots2d: settings and links, CSV points, the run, the figures."""

import base64
import struct
import zlib
from dataclasses import asdict, replace

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
import pytest
import torch

from mlp.model import MLP
from mlp.playground import (
    PRESETS,
    Playground,
    Settings,
    from_query,
    make_points,
    points_csv,
    read_points_csv,
    to_query,
)
from mlp.plots2d import boundary_figure, confusion_figure, curves_figure, neurons_figure, png_data_uri
from mlp.train import TrainConfig, Trainer


def weights(model) -> list[torch.Tensor]:
    return [p.detach().clone() for p in model.parameters()]


# --- engines, presets, the run ------------------------------------------------------------------


def test_manual_and_autograd_engines_agree_over_50_sgd_steps():
    points = make_points(Settings(kind="moons", classes=2, n=400))
    runs = {}
    for engine in ("autograd", "manual"):
        model = MLP(2, [16, 16], 2, activation="tanh", seed=3)
        cfg = TrainConfig(
            engine=engine, optimizer="sgd", lr=0.1, batch_size=32, epochs=100, seed=3, device="cpu"
        )
        trainer = Trainer(model, (points.X_train, points.y_train), (points.X_test, points.y_test), cfg)
        trainer.run_steps(50)
        runs[engine] = (weights(model), [r.train_loss for r in trainer.history.epochs], trainer)
    (wa, la, ta), (wm, lm, tm) = runs["autograd"], runs["manual"]
    assert ta.step_count == tm.step_count == 50
    assert max((a - b).abs().max().item() for a, b in zip(wa, wm, strict=True)) < 1e-5
    assert np.allclose(la, lm, atol=1e-5)


def test_spiral_preset_reaches_95_percent_on_test_points():
    settings = PRESETS["spiral"]
    assert (settings.kind, settings.classes) == ("spiral", 3)
    run = Playground(settings, make_points(settings))
    while not run.trainer.finished:
        run.run(200)
    assert run.status == "done"
    assert run.trainer.history.epochs[-1].val_acc >= 0.95


def test_reset_gives_identical_weights_and_an_identical_rerun():
    settings = replace(PRESETS["moons"], batch_size=16, dropout=0.1)  # minibatches and dropout: RNG at work
    run = Playground(settings, make_points(settings))
    start = weights(run.model)
    run.run(37)
    after_first = weights(run.model)
    run.reset()
    assert all(torch.equal(a, b) for a, b in zip(start, weights(run.model), strict=True))
    assert run.trainer.step_count == 0 and not run.trainer.history.epochs
    run.run(37)
    assert all(torch.equal(a, b) for a, b in zip(after_first, weights(run.model), strict=True))


def test_relu_at_lr_10_dies_rather_than_diverges_and_says_so():
    settings = replace(PRESETS["spiral"], optimizer="sgd", lr=10.0)
    run = Playground(settings, make_points(settings))
    assert run.mostly_dead() == []
    run.run(50)
    assert run.status == "running"  # the loss stays finite: the units die instead
    assert [layer for layer, dead, units in run.mostly_dead()] == [1, 2]
    assert all(dead >= 29 and units == 32 for _, dead, units in run.mostly_dead())


def test_divergence_at_lr_10_pauses_with_a_finite_model():
    settings = replace(PRESETS["spiral"], optimizer="sgd", lr=10.0, activation="leaky_relu")
    run = Playground(settings, make_points(settings))
    for _ in range(50):
        run.run(10)
        if run.trainer.finished:
            break
    assert run.status == "diverged" and "lower learning rate" in run.trainer.message
    assert all(torch.isfinite(p).all() for p in run.model.parameters())
    assert np.isfinite(run.grid_probs()).all()
    run.apply(replace(settings, lr=0.01))  # a lower learning rate is the way on
    assert run.status == "ready"
    run.run(5)
    assert run.status == "running"


def test_new_training_settings_keep_the_weights_and_the_history():
    run = Playground(PRESETS["circles"], make_points(PRESETS["circles"]))
    run.run(20)
    before = weights(run.model)
    run.apply(replace(run.settings, lr=0.001, optimizer="momentum"))
    assert all(torch.equal(a, b) for a, b in zip(before, weights(run.model), strict=True))
    assert len(run.trainer.history.epochs) == 20 and run.trainer.lr == pytest.approx(0.001)
    assert run.structure_differs(replace(run.settings, hidden=(4,)))
    assert not run.structure_differs(replace(run.settings, lr=0.5))


def test_comparing_engines_trains_a_twin_in_lockstep():
    run = Playground(PRESETS["xor"], make_points(PRESETS["xor"]))
    run.run(15)
    run.compare(True)
    assert run.trainer.step_count == 0  # comparing starts both from the initial weights
    run.run(40)
    gap = run.engine_gap()
    assert gap["epochs"] == 40 and gap["loss"] < 1e-5 and gap["weights"] < 1e-5
    assert run.twin_curves()["train_loss"].shape == run.curves()["train_loss"].shape
    run.compare(False)
    assert run.engine_gap() is None


def test_what_the_page_shows_has_the_right_shapes():
    settings = PRESETS["blobs"]
    run = Playground(settings, make_points(settings))
    run.run(30)
    assert run.grid_probs().shape == (100, 100, 4)
    assert np.allclose(run.grid_probs().sum(-1), 1, atol=1e-5)
    assert run.confusion().sum() == len(run.points.y_test)
    assert run.neuron_maps() == []  # blobs' preset has no hidden layer: softmax regression
    deep = Playground(PRESETS["spiral"], make_points(PRESETS["spiral"]))
    assert [m.shape for m in deep.neuron_maps()] == [(32, 28, 28), (32, 28, 28)]


# --- settings and links -------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(PRESETS))
def test_every_preset_round_trips_through_the_link(name):
    settings = PRESETS[name]
    back, warnings = from_query(to_query(settings))
    assert back == settings and warnings == []


def test_unusual_settings_round_trip_too():
    settings = Settings(
        kind="blobs", n=1250, noise=0.35, classes=5, test_fraction=0.3, data_seed=77, hidden=(128, 1, 7),
        activation="gelu", init="xavier", dropout=0.25, seed=12345, optimizer="nesterov", lr=0.0003,
        batch_size=7, weight_decay=1e-5, scheduler="cosine", grad_clip=0.5, epochs=321, speed=3,
    )  # fmt: skip
    assert from_query(to_query(settings)) == (settings, [])
    assert to_query(Settings(hidden=()))["hidden"] == "none"
    assert from_query({"hidden": "none"})[0].hidden == ()


def test_bad_link_parameters_are_skipped_with_warnings():
    query = {
        "lr": "abc",
        "n": "100000",
        "hidden": "8-x",
        "data": "swirl",
        "classes": "4",
        "opt": "adam",
        "foo": "1",
    }
    settings, warnings = from_query(query, base=PRESETS["moons"])
    assert settings == PRESETS["moons"]
    text = " ".join(warnings)
    for part in (
        "lr='abc'",
        "n='100000'",
        "hidden='8-x'",
        "data='swirl'",
        "classes=4",
        "unknown link parameter 'foo'",
    ):
        assert part in text, part
    assert from_query({"lr": "0.3", "n": "850"})[0] == replace(Settings(), lr=0.3, n=850)


def test_invalid_settings_say_what_is_allowed():
    with pytest.raises(ValueError, match=r"lr must be between 0\.0001 and 10"):
        Settings(lr=20.0)
    with pytest.raises(ValueError, match="At most 8 hidden layers"):
        Settings(hidden=(2,) * 9)
    with pytest.raises(ValueError, match="'moons' has 2 classes"):
        Settings(kind="moons", classes=3)
    with pytest.raises(ValueError, match="manual engine has no dropout"):
        Settings(engine="manual", dropout=0.2)


# --- CSV ----------------------------------------------------------------------------------------


def csv(rows: list[str], header: str = "x1,x2,label") -> bytes:
    return ("\n".join([header, *rows]) + "\n").encode()


GOOD = [f"{i * 0.1},{-i * 0.2},{i % 2}" for i in range(12)]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (csv(GOOD, header="a,b,c"), "Expected the header x1, x2, label"),
        (csv(GOOD, header="x1,x2"), "Expected the header x1, x2, label"),
        (csv([*GOOD, "1.0,abc,1"]), "Row 14 .* column x2, has 'abc', which is not a finite number"),
        (csv([*GOOD, "1.0,nan,1"]), "column x2, has 'nan'"),
        (csv([*GOOD, "1.0,,1"]), "column x2, is empty"),
        (csv([*GOOD, "inf,1,1"]), "column x1, has 'inf'"),
        (csv([f"{i},{i},1" for i in range(12)]), "Every point has label 1: a classifier needs at least two"),
        (csv([*GOOD, "1,1,0.5"]), "Labels must be whole numbers; row 14 has 0.5"),
        (csv([f"{i},{i},{i % 2}" for i in range(5001)]), "5,001 rows; at most 5,000"),
        (csv(GOOD[:5]), "5 rows; a playground needs at least 10"),
        (csv([f"{i},{i},{i}" for i in range(12)]), "12 different labels; at most 8"),
        (b"\xff\xfe\x00binary", "not a text file"),
        (b"", "not a readable CSV"),
    ],
)
def test_bad_csvs_are_refused_with_their_reason(data, message):
    with pytest.raises(ValueError, match=message):
        read_points_csv(data, "points.csv")


def test_a_good_csv_is_centred_scaled_and_relabelled():
    rows = [f"{100 + i},{50 - i},{(i % 3) * 5 + 1}" for i in range(30)]
    points = read_points_csv(csv(rows, header=" X1 , x2,label"))
    assert points.X.shape == (30, 2) and points.X.dtype == np.float32
    assert np.abs(points.X).max() == pytest.approx(1.5)
    assert sorted(set(points.y)) == [0, 1, 2] and points.classes == 3
    assert "labels 1, 6, 11 became 0 to 2" in points.note


def test_the_downloaded_data_uploads_again():
    original = make_points(PRESETS["spiral"])
    again = read_points_csv(points_csv(original).encode())
    assert again.classes == 3 and len(again.y) == len(original.y_train) + len(original.y_test)
    assert np.array_equal(again.y, np.concatenate([original.y_train, original.y_test]))


# --- figures ------------------------------------------------------------------------------------


def test_figures_are_valid_plotly_and_light():
    settings = PRESETS["spiral"]
    run = Playground(settings, make_points(settings))
    run.compare(True)
    run.run(20)
    figures = [
        boundary_figure(run.grid_probs(), run.points),
        curves_figure(run.curves(), run.twin_curves()),
        confusion_figure(run.confusion()),
        *[neurons_figure(m) for m in run.neuron_maps()],
    ]
    total = 0
    for fig in figures:
        go.Figure(fig.to_dict())  # full validation, which the page skips for speed
        total += len(pio.to_json(fig.to_dict(), validate=False))
    assert total < 300 * 1024


def test_png_encoder_writes_a_real_png():
    rgba = np.zeros((3, 2, 4), dtype=np.uint8)
    rgba[1, 0] = [10, 20, 30, 255]
    data = base64.b64decode(png_data_uri(rgba).split(",", 1)[1])
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert (width, height) == (2, 3)
    idat = data[data.index(b"IDAT") + 4 : data.index(b"IEND") - 8]
    raw = zlib.decompress(idat)
    assert len(raw) == 3 * (1 + 2 * 4) and raw[1 + 2 * 4 + 1 : 1 + 2 * 4 + 5] == bytes([10, 20, 30, 255])


def test_settings_are_plain_data():
    assert asdict(PRESETS["xor"])["hidden"] == (8, 8)
