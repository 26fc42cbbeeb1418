"""MNIST training, evaluation, digits and metrics."""

import io

import numpy as np
import pytest
import torch
from PIL import Image

from mlp.digits import canvas_to_gray, image_to_gray, to_mnist
from mlp.io import model_from_bytes, model_to_bytes
from mlp.metrics import confusion_matrix, per_class, top_k
from mlp.mnist import load_sample
from mlp.mnist_run import MnistRun
from mlp.model import ModelConfig
from mlp.train import TrainConfig


@pytest.fixture(scope="module")
def sample():
    return load_sample("the tests use it")


def new_run(data, epochs=10, **train):
    cfg = TrainConfig(
        **({"optimizer": "adam", "lr": 2e-3, "batch_size": 64, "epochs": epochs, "device": "cpu"} | train)
    )
    return MnistRun(data, ModelConfig(784, [128], 10), cfg)


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
    assert len(curves["report_epoch"]) >= 10 * 9  # points within epochs, not only at their ends
    assert len(curves["val_epoch"]) == 10 and curves["val_acc"][-1] > 0.85
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


# --- digits -------------------------------------------------------------------------------------


def png(array: np.ndarray, mode: str = "L") -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(array, mode).save(buffer, format="PNG")
    return buffer.getvalue()


def test_a_dark_digit_on_white_paper_becomes_an_mnist_digit():
    paper = np.full((300, 200), 235, dtype=np.uint8)
    paper[40:260, 90:115] = 20  # a thick vertical stroke: a "1", off centre
    digit = to_mnist(image_to_gray(png(paper)))
    assert digit.shape == (28, 28) and digit.dtype == np.uint8
    assert digit[0].max() == 0 and digit[:, 0].max() == 0  # black border, white ink
    ys, _ = np.nonzero(digit > 30)
    assert ys.max() - ys.min() + 1 <= 21  # fits the 20-pixel box
    mass = digit.astype(float)
    centre = (
        (np.indices(digit.shape)[0] * mass).sum() / mass.sum(),
        (np.indices(digit.shape)[1] * mass).sum() / mass.sum(),
    )
    assert abs(centre[0] - 13.5) < 1 and abs(centre[1] - 13.5) < 1


def test_a_transparent_png_and_a_canvas_drawing_work():
    rgba = np.zeros((64, 64, 4), dtype=np.uint8)
    rgba[10:54, 28:36] = [0, 0, 0, 255]  # black ink on a transparent background
    assert to_mnist(image_to_gray(png(rgba, "RGBA"))).max() > 200
    ink = np.zeros((56, 56), dtype=np.uint8)
    ink[10:46, 20:30] = 255
    assert to_mnist(canvas_to_gray(ink.tobytes(), 56)).max() > 200


@pytest.mark.parametrize(
    ("data", "message"),
    [(b"definitely not an image", "not an image"), (b"\x89PNG\r\n\x1a\nbroken", "not an image")],
)
def test_non_images_are_refused(data, message):
    with pytest.raises(ValueError, match=message):
        image_to_gray(data)


def test_an_empty_image_has_no_digit():
    with pytest.raises(ValueError, match="No digit found"):
        to_mnist(image_to_gray(png(np.full((50, 50), 255, dtype=np.uint8))))
    with pytest.raises(ValueError, match="Expected 3136"):
        canvas_to_gray(b"\x00" * 10, 56)


# --- metrics ------------------------------------------------------------------------------------


def test_confusion_and_per_class_scores():
    y_true = np.array([0, 0, 1, 1, 2, 2])
    y_pred = np.array([0, 1, 1, 1, 2, 0])
    confusion = confusion_matrix(y_true, y_pred, 3)
    assert confusion.tolist() == [[1, 1, 0], [0, 2, 0], [1, 0, 1]]
    rows = per_class(confusion)
    assert rows[1]["precision"] == pytest.approx(2 / 3) and rows[1]["recall"] == 1.0
    assert rows[0]["support"] == 2
    classes, probs = top_k(np.array([[0.1, 0.7, 0.2]]), 2)
    assert classes.tolist() == [[1, 2]] and probs.tolist() == [[0.7, 0.2]]
