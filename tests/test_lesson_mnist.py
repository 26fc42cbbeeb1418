"""The MNIST page's model: settings, a run's training and evaluation, a visitor's session."""

import numpy as np
import pytest
import torch

from mlp.data import load_sample
from mlp.io import model_from_bytes, model_to_bytes
from mlp.lessons.mnist import MnistRun, MnistSession, MnistSettings, from_query, from_widgets, to_query


@pytest.fixture(scope="module")
def sample():
    return load_sample("the tests use it")


def new_run(data, epochs=10, **train):
    settings = {"optimizer": "adam", "lr": 2e-3, "batch_size": 64, "epochs": epochs, "device": "cpu"} | train
    return MnistRun(data, MnistSettings(**settings))


@pytest.mark.slow
def test_the_bundled_sample_trains_past_90_percent_within_10_epochs(sample):
    run = new_run(sample, epochs=10)
    while not run.finished:
        run.advance(0.5)
    assert run.trainer.status == "done" and run.trainer.epoch == 10
    evaluation = run.evaluate()
    assert evaluation.accuracy >= 0.90  # on the 1,000 held-out digits
    assert evaluation.confusion.sum() == 1000 and np.trace(evaluation.confusion) == round(
        evaluation.accuracy * 1000
    )
    curves = run.live_curves()
    assert len(curves["train"]["epoch"]) >= 10 * 9  # points within epochs, not only at their ends
    assert len(curves["val"]["epoch"]) == 10 and curves["val"]["val_acc"][-1] > 0.85
    summary = run.summary()
    assert summary.test_accuracy == evaluation.accuracy and summary.epochs == 10


def test_stop_lands_within_an_epoch_and_keeps_the_model(sample):
    run = new_run(sample, epochs=50, batch_size=16)
    run.trainer.run_steps(run.trainer.steps_per_epoch + 10)
    before = [p.detach().clone() for p in run.model.parameters()]
    run.stop()
    assert run.finished and run.trainer.status == "stopped" and "keeps what it learned" in run.trainer.message
    run.advance(1.0)  # a stopped run trains no further
    assert all(torch.equal(a, b) for a, b in zip(before, run.model.parameters(), strict=True))
    assert 1 < run.trainer.epoch_progress < 2
    assert run.evaluate().accuracy > 0.5


def test_a_model_round_trips_through_a_file_with_identical_predictions(sample):
    run = new_run(sample, epochs=1)
    run.advance(5)
    data = model_to_bytes(run.model, test_accuracy=run.evaluate().accuracy)
    model, info = model_from_bytes(data, expect_d_in=784, expect_d_out=10)
    loaded = MnistRun.from_model(sample, model, "upload.safetensors")
    assert loaded.finished and info["test_accuracy"] == run.evaluate().accuracy
    assert np.array_equal(loaded.evaluate().probs, run.evaluate().probs)
    digit = sample.x_test[7]
    assert np.array_equal(loaded.predict(digit), run.predict(digit))


def test_first_layer_weights_are_images(sample):
    run = new_run(sample, epochs=1)
    assert run.first_layer_weights(16).shape == (16, 28, 28)


def test_mistakes_are_wrong_and_sorted_by_confidence(sample):
    run = new_run(sample, epochs=1)
    run.advance(5)
    mistakes = run.evaluate().mistakes(sample.y_test, limit=5)
    assert len(mistakes) == 5
    assert all(m["top3"][0][0] != m["true"] for m in mistakes)
    confidences = [m["top3"][0][1] for m in mistakes]
    assert confidences == sorted(confidences, reverse=True)


def test_lr_schedule_follows_the_config(sample):
    run = new_run(sample, epochs=4, scheduler="cosine", warmup_epochs=1, lr=0.01)
    epochs, lrs = run.lr_schedule()
    assert epochs[0] == 0 and epochs[-1] == pytest.approx(4, abs=0.05)
    assert lrs.max() == pytest.approx(0.01, rel=0.05) and lrs[-1] < 0.001


def test_a_session_starts_stops_and_keeps_every_run(sample):
    session = MnistSession()
    session.start(sample, MnistSettings(epochs=50, batch_size=16, device="cpu"))
    assert session.running and not session.ready
    assert session.advance(0.2) is False  # still training
    session.stop()
    assert not session.running and session.ready and session.run.trainer.status == "stopped"
    assert [r.name for r in session.runs] == ["run 1"] and session.runs[0].test_accuracy is not None
    session.start(sample, MnistSettings(epochs=1, device="cpu"))
    while not session.advance(0.5):
        pass
    assert session.run.name == "run 2" and [r.name for r in session.runs] == ["run 1", "run 2"]


def test_a_session_refuses_a_file_that_is_not_a_model_and_keeps_its_run(sample):
    session = MnistSession()
    session.start(sample, MnistSettings(epochs=1, device="cpu"))
    session.stop()
    run = session.run
    with pytest.raises(ValueError, match="not a safetensors model file"):
        session.load(sample, b"not a model", "notes.txt", "id-1")
    assert session.run is run and session.loaded_file is None


def test_settings_round_trip_through_a_link_and_the_sidebar():
    settings = MnistSettings(hidden=(256, 64), activation="gelu", lr=3e-3, batch_size=64, epochs=12, seed=7)
    assert from_query(to_query(settings)) == (settings, [])
    linked, notes = from_query({"lr": "9", "hidden": "64-x", "epochs": "12"})
    assert linked == MnistSettings(epochs=12) and [n.key for n in notes] == ["lr", "hidden"]
    widgets = {"hidden": "32, 16", "amp": True, "compile": True} | {
        k: v for k, v in settings.__dict__.items() if k not in ("hidden", "amp", "compile")
    }
    on_cpu, problems = from_widgets(widgets, settings, device_kind="cpu")
    assert on_cpu.hidden == (32, 16) and not on_cpu.amp and not on_cpu.compile and problems == []
    assert from_widgets(widgets, settings, device_kind="cuda")[0].amp is True
    kept, problems = from_widgets(widgets | {"hidden": "32, many"}, settings, device_kind="cpu")
    assert kept.hidden == (256, 64) and "'many' is not a whole number" in str(problems[0])
