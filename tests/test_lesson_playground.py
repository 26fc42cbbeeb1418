"""The 2D playground's model: settings and links, presets, the run and what a frame draws."""

import threading
from dataclasses import replace

import numpy as np
import pytest
import torch

from mlp.data import read_points_csv
from mlp.lessons.playground import (
    PRESETS,
    Settings,
    from_query,
    from_widgets,
    link,
    make_points,
    to_query,
    train_curve_name,
)
from mlp.links.format import loss_text
from mlp.model import MLP
from mlp.runs.playground import Playground, current_run
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


def test_the_manual_engine_follows_autograd_through_a_reconfigure():
    """reconfigure() makes a new optimizer, which flattens the weights into new buffers: the
    manual engine's NumPy views of them must follow, or it would train a stale copy."""
    points = make_points(Settings(kind="moons", classes=2, n=400))
    final = {}
    for engine in ("autograd", "manual"):
        model = MLP(2, [16, 16], 2, seed=3)
        cfg = TrainConfig(engine=engine, optimizer="adam", lr=0.01, batch_size=32, epochs=100, device="cpu")
        trainer = Trainer(model, (points.X_train, points.y_train), None, cfg)
        trainer.run_steps(20)
        trainer.reconfigure(replace(cfg, optimizer="sgd", lr=0.1, weight_decay=1e-3))
        trainer.run_steps(20)
        final[engine] = weights(model)

    def gap(one, other) -> float:
        return max((a - b).abs().max().item() for a, b in zip(one, other, strict=True))

    assert gap(final["manual"], weights(MLP(2, [16, 16], 2, seed=3))) > 0.01  # it trained
    assert gap(final["autograd"], final["manual"]) < 1e-5


@pytest.mark.slow
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


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_a_loss_that_explodes_at_lr_10_pauses_the_run_and_says_what_to_try(optimizer):
    """Adam at lr 10 used to sit at ~1e4 and chance accuracy with no word; SGD got a "dying" note."""
    settings = replace(PRESETS["spiral"], optimizer=optimizer, lr=10.0)
    run = Playground(settings, make_points(settings))
    for _ in range(20):
        run.run(10)
        if run.trainer.finished:
            break
    message = run.trainer.message
    assert run.status == "diverged" and "exploded" in message and "10× smaller" in message, message
    assert all(torch.isfinite(p).all() for p in run.model.parameters())
    assert "Training diverged" in run.view.banner()[1]


@pytest.mark.slow
def test_healthy_presets_are_never_taken_for_exploding():
    for name, settings in PRESETS.items():
        run = Playground(settings, make_points(settings))
        run.run(400)
        assert run.status in ("running", "done"), (name, run.trainer.message)


def test_relu_units_that_die_without_the_loss_exploding_get_their_own_warning():
    settings = replace(PRESETS["spiral"], optimizer="sgd", lr=10.0, grad_clip=0.5)  # clipped: no explosion
    run = Playground(settings, make_points(settings))
    assert run.view.mostly_dead() == []
    run.run(300)
    assert run.status == "running"
    assert [(layer, dead) for layer, dead, _ in run.view.mostly_dead()] == [(2, 32)]
    assert "Units have died" in run.view.banner()[1] and "leaky ReLU" in run.view.banner()[1]


def test_divergence_at_lr_10_pauses_with_a_finite_model():
    settings = replace(PRESETS["spiral"], optimizer="sgd", lr=10.0, activation="leaky_relu")
    run = Playground(settings, make_points(settings))
    for _ in range(50):
        run.run(10)
        if run.trainer.finished:
            break
    assert run.status == "diverged" and "learning rate 10× smaller" in run.trainer.message
    assert all(torch.isfinite(p).all() for p in run.model.parameters())
    assert np.isfinite(run.view.grid_probs()).all()
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
    assert run.settings.needs_new_network(replace(run.settings, hidden=(4,)))
    assert not run.settings.needs_new_network(replace(run.settings, lr=0.5))


def test_the_run_follows_the_settings_new_points_new_network_or_new_training():
    run = current_run(None, PRESETS["circles"])
    run.run(5)
    assert current_run(run, replace(run.settings, lr=0.1)) is run and run.trainer.lr == pytest.approx(0.1)
    assert run.trainer.step_count == 5  # the same run trains on with the new learning rate
    new_net = current_run(run, replace(run.settings, hidden=(4,)))
    assert new_net is not run and new_net.points is not run.points and new_net.trainer.step_count == 0
    assert np.array_equal(new_net.points.X_train, run.points.X_train)  # same data settings, same points
    new_points = current_run(new_net, replace(new_net.settings, data_seed=1))
    assert not np.array_equal(new_points.points.X_train, run.points.X_train)
    rows = "".join(f"{i},{(i * 7) % 11},{i % 3}\n" for i in range(60))
    upload = read_points_csv(("x1,x2,label\n" + rows).encode(), "mine.csv")
    mine = current_run(new_points, new_points.settings, upload, "file-1")
    assert mine.points.name == "mine.csv" and mine.points.classes == 3
    assert current_run(mine, replace(mine.settings, noise=0.5), upload, "file-1") is mine  # the file decides


def test_comparing_engines_trains_a_twin_in_lockstep():
    run = Playground(PRESETS["xor"], make_points(PRESETS["xor"]))
    run.run(15)
    run.compare(True)
    assert run.trainer.step_count == 0  # comparing starts both from the initial weights
    run.run(40)
    gap = run.view.engine_gap()
    assert gap["epochs"] == 40 and gap["loss"] < 1e-5 and gap["weights"] < 1e-5
    assert run.view.twin_curves()["train_loss"].shape == run.view.curves()["train_loss"].shape
    run.compare(False)
    assert run.view.engine_gap() is None


def test_what_the_page_shows_has_the_right_shapes():
    settings = PRESETS["blobs"]
    run = Playground(settings, make_points(settings))
    run.run(30)
    assert run.view.grid_probs().shape == (100, 100, 4)
    assert np.allclose(run.view.grid_probs().sum(-1), 1, atol=1e-5)
    assert run.view.confusion().sum() == len(run.points.y_test)
    assert run.view.neuron_maps() == []  # blobs' preset has no hidden layer: softmax regression
    deep = Playground(PRESETS["spiral"], make_points(PRESETS["spiral"]))
    assert [m.shape for m in deep.view.neuron_maps()] == [(32, 28, 28), (32, 28, 28)]


# --- settings and links -------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(PRESETS))
def test_every_preset_round_trips_through_the_link(name):
    settings = PRESETS[name]
    assert from_query(to_query(settings)) == (settings, [])


def test_unusual_settings_round_trip_too():
    settings = Settings(
        kind="blobs",
        n=1250,
        noise=0.35,
        classes=5,
        test_fraction=0.3,
        data_seed=77,
        hidden=(128, 1, 7),
        activation="gelu",
        init="xavier",
        dropout=0.25,
        seed=12345,
        optimizer="nesterov",
        lr=0.0003,
        batch_size=7,
        weight_decay=1e-5,
        l1=0.003,
        l2=3.0,
        scheduler="cosine",
        warmup_epochs=20.0,
        grad_clip=0.5,
        epochs=321,
        speed=3,
    )
    assert from_query(to_query(settings)) == (settings, [])
    assert to_query(Settings(hidden=()))["hidden"] == "none"
    assert from_query({"hidden": "none"})[0].hidden == ()


def test_l1_and_l2_rates_round_trip_through_the_link_and_reach_the_training_config():
    settings = Settings(l1=0.01, l2=0.1)
    query = to_query(settings)
    assert (query["l1"], query["l2"]) == ("0.01", "0.1") and from_query(query) == (settings, [])
    assert from_query({"l1": "0.02"})[0].l1 == 0.02  # between stops, as a link may bring
    cfg = settings.train_config(100, "classify")
    assert (cfg.l1, cfg.l2, cfg.weight_decay) == (0.01, 0.1, 0.0)
    assert train_curve_name(settings) == "train (loss + penalty)" and train_curve_name(Settings()) == "train"
    settings, notes = from_query({"l1": "-1", "l2": "lots"})
    assert (settings.l1, settings.l2) == (0.0, 0.0) and {n.key for n in notes} == {"l1", "l2"}


def test_bad_link_parameters_are_skipped_with_notes_that_never_repeat_them():
    query = {"lr": "abc", "n": "100000", "hidden": "8-x", "data": "swirl", "classes": "4", "opt": "adam"}
    query |= {"foo": "1", "sps": "1e400", "noise": "nan", "seed": "x" * 500}
    settings, notes = from_query(query, base=PRESETS["moons"])
    assert settings == PRESETS["moons"]
    reasons = {note.key: note.reason for note in notes}
    assert reasons == {
        "lr": "lr must be a number between 0.0001 and 10",
        "n": "n must be between 50 and 2000",
        "hidden": "hidden must be 0 to 8 layers of 1 to 128 units, separated by commas, e.g. 32, 32",
        "data": "kind must be one of blobs, moons, circles, xor, spiral, teacher, reg-plane, reg-gauss",
        "foo": "this page has no such setting",
        "sps": "speed must be a whole number between 1 and 2000",
        "noise": "noise must be a finite number",
        "seed": "longer than 200 characters",
        "classes": "this data set has 2 classes",
    }
    assert {note.value for note in notes} >= {"abc", "100000", "8-x", "swirl", "1", "1e400", "nan", "4"}
    assert from_query({"lr": "0.3", "n": "850"})[0] == replace(Settings(), lr=0.3, n=850)


def test_a_link_from_before_steps_a_second_keeps_its_pace():
    # ?speed= was steps a frame, at 10 frames a second: speed=10 played 100 steps a second.
    assert from_query({"speed": "10"}) == (replace(Settings(), speed=100), [])
    assert from_query({"speed": "20", "sps": "5"})[0].speed == 5  # the new name wins
    settings, notes = from_query({"speed": "fast"})
    assert settings == Settings() and [(n.key, n.reason) for n in notes] == [
        ("speed", "this page has no such setting")
    ]


def test_a_link_from_uploaded_points_says_so():
    assert link(PRESETS["xor"], uploaded=True)["data"] == "file"
    settings, notes = from_query(link(PRESETS["xor"], uploaded=True))
    assert settings == replace(PRESETS["xor"], kind=Settings().kind)  # all but the points it can't carry
    assert [(n.key, n.value) for n in notes] == [("data", "file")]
    assert "came from a file" in notes[0].reason


def test_sidebar_values_that_cannot_be_used_keep_the_previous_ones():
    widgets = {**to_query_fields(PRESETS["spiral"]), "hidden": "16, banana", "lr": 0.1}
    settings, problems = from_widgets(widgets, PRESETS["spiral"])
    assert settings.hidden == (32, 32) and settings.lr == 0.1
    assert "'banana' is not a whole number" in str(problems[0])
    manual = from_widgets({**widgets, "hidden": "8", "engine": "manual", "dropout": 0.3}, PRESETS["spiral"])[
        0
    ]
    assert manual.engine == "manual" and manual.dropout == 0.0  # the rule wins over the stale slider


def to_query_fields(settings: Settings) -> dict:
    return {name: getattr(settings, name) for name in settings.__dataclass_fields__}


def test_invalid_settings_say_what_is_allowed():
    with pytest.raises(ValueError, match=r"lr must be between 0\.0001 and 10"):
        Settings(lr=20.0)
    with pytest.raises(ValueError, match="Use 0 to 8 hidden layers"):
        Settings(hidden=(2,) * 9)
    with pytest.raises(ValueError, match="'moons' has 2 classes"):
        Settings(kind="moons", classes=3)
    with pytest.raises(ValueError, match="manual engine has no dropout"):
        Settings(engine="manual", dropout=0.2)


def test_clicks_during_play_never_interleave_training_or_drawing():
    """Frames of Play, Step clicks and redraws from many threads: the same weights as one run alone."""
    settings = replace(PRESETS["moons"], batch_size=16, dropout=0.3)  # batches and dropout draw from RNGs
    run = current_run(None, settings)
    asked = [10] * 12 + [1] * 12  # Play's frames at speed 10, and Step clicks
    draws = [
        run.view.grid_probs,
        run.view.neuron_maps,
        run.view.dead_units,
        run.view.confusion,
        run.view.banner,
        run.view.curves,
    ] * 4

    def act(job) -> None:
        if isinstance(job, int):
            run.run(job)
        else:
            job()

    jobs = [*asked, *draws]
    np.random.default_rng(0).shuffle(jobs)
    threads = [threading.Thread(target=act, args=(job,)) for job in jobs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert run.trainer.step_count == sum(asked)
    alone = current_run(None, settings)
    alone.run(sum(asked))
    assert all(torch.equal(a, b) for a, b in zip(weights(alone.model), weights(run.model), strict=True))


@pytest.mark.parametrize(
    ("value", "text"), [(0.01234, "0.0123"), (1.23456, "1.2346"), (472.5, "472.5"), (472548.3, "4.7e+05")]
)
def test_losses_print_short_and_never_cut_off(value, text):
    assert loss_text(value) == text and len(text) <= 7
    assert loss_text(float("nan")) == loss_text(None) == "–"
