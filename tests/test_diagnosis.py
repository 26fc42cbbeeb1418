"""mlp.runs.diagnosis through real runs: each banner names the cause the run shows, and every
figure of a run (the numbers, the confusion matrix, the boundary) describes the same model."""

import math
from dataclasses import replace

import numpy as np
import pytest

from mlp.lessons.playground import PRESETS, Settings, make_points
from mlp.runs import diagnosis
from mlp.runs.playground import Playground

DEEP = Settings(kind="moons", n=400, noise=0.15, classes=2, hidden=(32,) * 8, optimizer="sgd", lr=0.1)


def ran(settings: Settings, steps: int) -> Playground:
    run = Playground(settings, make_points(settings))
    run.run(steps)
    return run


def shown(run: Playground) -> dict[str, str]:
    return dict(run.view.live_metrics())


@pytest.mark.parametrize("seed", range(3))
def test_a_stall_at_chance_with_a_fading_signal_is_put_down_to_the_initialisation(seed):
    run = ran(replace(DEEP, init="normal", seed=seed, data_seed=seed), 30)
    assert abs(run.trainer.history.epochs[-1].train_loss - math.log(2)) < 0.01  # a coin toss
    kind, text = run.view.banner()
    assert kind == "warning" and "initialisation is too small" in text and "He" in text
    assert diagnosis.signal_gain(list(run.model.layers)) < 1e-6  # 0.11 a layer, 9 layers


def test_the_same_stack_with_he_init_gets_no_warning():
    run = ran(replace(DEEP, init="kaiming"), 30)
    assert run.view.banner() is None
    assert diagnosis.signal_gain(list(run.model.layers)) > 1


def test_a_small_init_in_a_shallow_net_that_trains_is_not_blamed():
    run = ran(replace(PRESETS["moons"], init="normal"), 300)
    assert run.view.banner() is None and run.trainer.history.epochs[-1].val_acc > 0.8


def test_dead_units_are_put_down_to_the_step_size_or_relu():
    settings = replace(PRESETS["spiral"], optimizer="sgd", lr=10.0, grad_clip=0.5)  # clipped: no explosion
    kind, text = ran(settings, 300).view.banner()
    assert kind == "warning" and "Units have died" in text
    assert "Lower the learning rate" in text and "leaky ReLU" in text and "initialisation" not in text


def test_divergence_is_put_down_to_the_learning_rate():
    run = ran(replace(PRESETS["moons"], optimizer="sgd", lr=10.0), 300)
    kind, text = run.view.banner()
    assert run.status == "diverged" and kind == "error" and "learning rate is too large" in text


def test_after_a_divergence_every_figure_describes_the_model_put_back():
    run = ran(replace(PRESETS["moons"], optimizer="sgd", lr=10.0), 300)
    numbers, confusion = shown(run), run.view.confusion("test")
    accuracy = np.trace(confusion) / confusion.sum()
    assert numbers["Test accuracy"] == f"{accuracy:.1%}"  # the number and the matrix agree
    good = run.trainer.guard.checked_step
    assert numbers["Step"] == f"{good:,}" and numbers["Epoch"] == f"{good // run.trainer.steps_per_epoch:,}"
    assert f"from step {good:,}" in run.view.banner()[1]
    again = ran(replace(PRESETS["moons"], optimizer="sgd", lr=10.0), good)  # the weights of that step
    pairs = zip(again.model.parameters(), run.model.parameters(), strict=True)
    assert all(np.allclose(a.detach(), b.detach()) for a, b in pairs)


@pytest.mark.parametrize("batch_size", [0, 32])
def test_the_epoch_and_step_counters_agree(batch_size):
    run = ran(replace(PRESETS["moons"], batch_size=batch_size), 25)
    numbers, spe = shown(run), run.trainer.steps_per_epoch
    assert numbers["Step"] == "25" and numbers["Epoch"] == f"{25 // spe:,}"


def test_the_init_lessons_small_init_run_is_blamed_on_the_initialisation_from_its_first_frames():
    from mlp.curriculum.catalogue import LESSONS
    from mlp.lessons.playground import from_query

    settings, _ = from_query(LESSONS["init"].compare[0][1].query)
    run = Playground(settings, make_points(settings))
    said = []
    for _ in range(30):  # 30 frames of 10 steps, as the page plays it
        run.run(10)
        said.append(run.view.banner())
    assert all(banner is not None and "initialisation is too small" in banner[1] for banner in said[2:]), said
    assert not any(banner and "Units have died" in banner[1] for banner in said)
    assert "8 hidden layers" in said[-1][1]


@pytest.mark.parametrize("seed", range(3))
def test_after_a_divergence_the_weights_put_back_are_an_epoch_the_curves_show(seed):
    """The learning-rate lesson at lr = 10, played in frames: the model put back is the last
    epoch whose test loss vouched for it, so the numbers match a point on the curves."""
    from mlp.curriculum.catalogue import LESSONS
    from mlp.lessons.playground import from_query

    query = LESSONS["learning-rate"].setup.query | {"seed": str(seed), "dseed": str(seed)}
    run = Playground(from_query(query)[0], make_points(from_query(query)[0]))
    while not run.trainer.finished:
        run.run(10)
    assert run.status == "diverged"
    good = run.trainer.guard.checked_step
    record = next(e for e in run.trainer.history.epochs if e.step == good)  # on the curves
    assert shown(run)["Test accuracy"] == f"{record.val_acc:.1%}" and good > 0
