"""Every lesson keeps its promise: its setup, loaded as the page loads it, trained by the library.

A promise is checked on five seeds: offset k = 0..4 added to every setup's `seed` (initial
weights, batch order) and `dseed` (the points), nothing else changed, as a class trying other
seeds would. It must hold on at least 4 of them (the slow tests); the quick ones try offset 0.
Thresholds are stated here; the values measured at offsets 0, 1, 2, 3, 4 are in comments.
"""

import math
from collections.abc import Callable
from dataclasses import replace

import pytest
import torch

from mlp.curriculum.catalogue import COMPARE, LESSON, LESSONS, PAGES, Setup, lessons_for
from mlp.curriculum.teacher import teacher_curve
from mlp.data import load_sample
from mlp.lessons import forward_backward as fb
from mlp.lessons import mnist as mn
from mlp.lessons import playground as pg
from mlp.lessons.init_spread import activation_spread
from mlp.metrics import neighbour_correlation
from mlp.runs.mnist import MnistRun, first_layer_weights
from mlp.runs.playground import Playground
from mlp.train.penalty import penalised, zero_count

READERS = {"playground": pg.from_query, "forward_backward": fb.from_query, "mnist": mn.from_query}


def settings_of(setup: Setup):
    settings, notes = READERS[setup.page]({k: v for k, v in setup.query.items() if k != COMPARE})
    assert notes == []  # a lesson's link is read without a single complaint
    return settings


SEEDS = range(5)  # offsets added to each setup's seed and dseed
AT_LEAST = 4  # of the five: a promise may miss on one seed, never on two


def moved(setup: Setup, k: int) -> Setup:
    """The setup with k added to its seeds: other initial weights, batches and points."""
    seeds = {key: str(int(setup.query[key]) + k) for key in ("seed", "dseed") if key in setup.query}
    return Setup(setup.page, setup.query | seeds)


def holds_on_seeds(promise: Callable[[int], list[str]]) -> None:
    """`promise(k)` says what failed at offset k (nothing if it held); it holds on ≥ AT_LEAST."""
    failed = {k: problems for k in SEEDS if (problems := promise(k))}
    assert len(SEEDS) - len(failed) >= AT_LEAST, failed


def trained(setup: Setup, k: int = 0) -> Playground:
    settings = settings_of(moved(setup, k))
    run = Playground(settings, pg.make_points(settings))
    run.compare(setup.query.get(COMPARE) == "1")  # as the page does
    run.trainer.fit()
    if run.twin is not None:
        run.twin.fit()
    return run


def last(run: Playground):
    return run.trainer.history.epochs[-1]


def hidden_dead_share(run: Playground) -> float:
    """The share of hidden units positive for no training point (ReLU's 0, leaky ReLU's flat side)."""
    with torch.inference_mode():
        outputs = run.model.activations(torch.from_numpy(run.points.X_train))[:-1]
    return sum(int((a <= 0).all(dim=0).sum()) for a in outputs) / sum(a.shape[1] for a in outputs)


def test_there_are_at_least_eight_lessons_on_every_page_with_two_sentences_each():
    assert len(LESSONS) >= 8
    assert {lesson.page for lesson in LESSONS.values()} == set(PAGES)
    for lesson in LESSONS.values():
        assert lesson.watch.endswith(".") and lesson.why.endswith(".") and lesson.outcome
        assert lesson.link()[LESSON] == lesson.key
        settings_of(lesson.setup)
        for _, setup in lesson.compare:
            settings_of(setup)
        assert all(lesson in lessons_for(page) for page in lesson.pages)  # its panel goes with it
    assert lessons_for("playground").count(LESSONS["init"]) == 1  # its 8-layer runs are there


def test_views_in_forward_links_round_trip_and_bad_ones_get_notes():
    settings, view = fb.ForwardSettings(hidden=(5, 5)), fb.ForwardView(tab="gradients", step="dW2")
    query = fb.to_query(settings, view)
    assert fb.from_query(query) == (settings, []) and fb.view_from_query(query, settings) == (view, [])
    view, notes = fb.view_from_query({"step": "dz9", "tab": "nope", "width": "100"}, settings)
    assert view == fb.ForwardView() and {n.key for n in notes} == {"step", "tab", "width"}


def xor_needs_a_hidden_layer(k: int) -> list[str]:
    line = LESSONS["xor-line"]
    flat, bent = last(trained(line.setup, k=k)).val_acc, last(trained(line.compare[0][1], k=k)).val_acc
    # measured: no hidden layer 0.512 0.475 0.562 0.537 0.412; 4 tanh units 1.000 1.000 1.000 0.938 1.000
    return [f"line {flat:.3f}"] * (flat >= 0.80) + [f"hidden layer {bent:.3f}"] * (bent < 0.90)


def test_xor_needs_a_hidden_layer():
    assert xor_needs_a_hidden_layer(0) == []


@pytest.mark.slow
def test_xor_needs_a_hidden_layer_on_five_seeds():
    holds_on_seeds(xor_needs_a_hidden_layer)


def circles_need_squares_or_a_hidden_layer(k: int) -> list[str]:
    lesson = LESSONS["circle-features"]
    flat, squared = trained(lesson.setup, k=k), trained(lesson.compare[0][1], k=k)
    assert squared.model.config.d_in == 4 and squared.settings.hidden == ()
    line, circle = last(flat).val_acc, last(squared).val_acc
    # measured: x1, x2 only 0.475 0.550 0.575 0.438 0.537; with x1², x2² 1.000 0.988 0.975 0.975 1.000
    return [f"line {line:.3f}"] * (line >= 0.70) + [f"with x1², x2² {circle:.3f}"] * (circle < 0.95)


def test_circles_need_squares_or_a_hidden_layer():
    assert circles_need_squares_or_a_hidden_layer(0) == []


@pytest.mark.slow
def test_circles_need_squares_or_a_hidden_layer_on_five_seeds():
    holds_on_seeds(circles_need_squares_or_a_hidden_layer)


def bumps_need_hidden_units(k: int) -> list[str]:
    lesson = LESSONS["regression-bumps"]
    flat, bent = trained(lesson.setup, k=k), trained(lesson.compare[0][1], k=k)
    assert flat.trainer.cfg.loss == bent.trainer.cfg.loss == "mse" and flat.model.config.d_out == 1
    plane, bumps = last(flat).val_acc, last(bent).val_acc  # a regression's val_acc is its test R²
    # measured: no hidden layer -0.025 0.031 -0.002 0.013 0.012; 16-16 tanh 0.962 0.950 0.943 0.955 0.967
    return [f"plane R² {plane:.3f}"] * (plane >= 0.3) + [f"hidden layers R² {bumps:.3f}"] * (bumps < 0.8)


def test_bumps_need_hidden_units():
    assert bumps_need_hidden_units(0) == []


@pytest.mark.slow
def test_bumps_need_hidden_units_on_five_seeds():
    holds_on_seeds(bumps_need_hidden_units)


def depth_beats_width_early(k: int) -> list[str]:
    lesson = LESSONS["width-depth"]
    wide, deep = trained(lesson.setup, k=k), trained(lesson.compare[0][1], k=k)
    count = [sum(p.numel() for p in run.model.parameters()) for run in (wide, deep)]
    assert count == [81, 81]
    w, d = last(wide), last(deep)
    # measured test accuracy wide 0.750 0.758 0.750 0.800 0.683, deep 0.917 0.908 0.825 0.950 0.833;
    # test loss wide 0.47 0.50 0.48 0.48 0.58, deep 0.31 0.36 0.36 0.37 0.41 (ratio 0.65-0.78)
    return [f"accuracy {d.val_acc:.3f} vs {w.val_acc:.3f}"] * (d.val_acc <= w.val_acc) + [
        f"loss {d.val_loss:.3f} vs {w.val_loss:.3f}"
    ] * (d.val_loss >= 0.85 * w.val_loss)


@pytest.mark.slow
def test_depth_beats_width_on_a_spiral_at_the_same_budget():
    holds_on_seeds(depth_beats_width_early)


def learning_rates(k: int) -> list[str]:
    lesson, problems = LESSONS["learning-rate"], []
    high = trained(lesson.setup, k=k)
    if not (high.trainer.status == "diverged" and high.view.banner()[0] == "error"):  # the page says so
        problems.append(f"lr = 10 {high.trainer.status}")  # measured: diverged on all five
    low = trained(lesson.compare[0][1], k=k)
    losses = [e.train_loss for e in low.trainer.history.epochs]
    # measured final / first train loss 0.965 0.970 0.983 0.987 0.937
    if not (low.trainer.status == "done" and losses[-1] > 0.90 * losses[0]):
        problems.append(f"lr = 0.0001 {losses[-1]:.3f} from {losses[0]:.3f}")
    middle = last(trained(lesson.compare[1][1], k=k)).val_acc  # measured 1.000 1.000 0.975 1.000 1.000
    return problems + [f"lr = 0.3 {middle:.3f}"] * (middle < 0.95)


def test_too_high_a_learning_rate_explodes_and_too_low_a_one_crawls():
    assert learning_rates(0) == []


@pytest.mark.slow
def test_learning_rates_on_five_seeds():
    holds_on_seeds(learning_rates)


def relus_die(k: int) -> list[str]:
    lesson = LESSONS["dead-relu"]
    relu, leaky = trained(lesson.setup, k=k), trained(lesson.compare[0][1], k=k)
    dead, guess, kept = hidden_dead_share(relu), last(relu).val_acc, last(leaky).val_acc
    # measured dead share 0.73 0.78 0.58 0.58 0.62, ReLU test accuracy 0.500 on all five;
    # leaky ReLU 1.000 0.975 0.963 0.975 0.988 (its units sit on their flat side as often, but
    # its slope of 0.01 still passes gradient)
    problems = [f"dead {dead:.2f}"] * (dead < 0.5) + [f"ReLU {guess:.3f}"] * (guess > 0.6)
    return problems + [f"leaky {kept:.3f}"] * (kept < 0.9)


@pytest.mark.slow
def test_a_large_learning_rate_kills_relus_and_leaky_relus_survive():
    holds_on_seeds(relus_die)


def small_init_stalls(k: int) -> list[str]:
    lesson = LESSONS["init"]
    spread = activation_spread(depth=10, width=256, seed=k)
    shrunk, kept = spread["normal"][-1] / spread["normal"][0], spread["kaiming"][-1] / spread["kaiming"][0]
    # measured ×1.1e-6 1.5e-6 1.4e-6 0.9e-6 1.3e-6 (each layer ×0.26), He ×0.73 0.96 0.89 0.58 0.85
    problems = [f"N(0, 0.02) ×{shrunk:.2g}"] * (shrunk >= 1e-3) + [f"He ×{kept:.2g}"] * (not 0.5 <= kept <= 2)
    small, he = last(trained(lesson.compare[0][1], k=k)), last(trained(lesson.compare[1][1], k=k))
    # measured train loss 0.6939 0.6938 0.6944 0.6943 0.6934 at 0.500 test accuracy (ln 2 = 0.6931)
    if abs(small.train_loss - math.log(2)) >= 0.01 or small.val_acc > 0.55:
        problems.append(f"small init {small.train_loss:.4f}, {small.val_acc:.3f}")
    # measured He test accuracy 0.975 1.000 0.988 0.988 1.000
    return problems + [f"He {he.val_acc:.3f}"] * (he.val_acc < 0.95)


@pytest.mark.slow
def test_a_small_init_shrinks_a_deep_stack_and_stalls_training():
    lesson = LESSONS["init"]
    view, _ = fb.view_from_query(lesson.setup.query, settings_of(lesson.setup))
    assert view.tab == "init" and (view.spread_depth, view.spread_width) == (10, 256)  # as tested
    assert [settings_of(s).init for _, s in lesson.compare] == ["normal", "kaiming"]
    holds_on_seeds(small_init_stalls)


def mean_abs_weight(run: Playground) -> float:
    return float(torch.cat([p.detach().flatten() for p in penalised(run.model)]).abs().mean())


def l1_zeroes_weights(k: int) -> list[str]:
    lesson = LESSONS["l1-zeros"]
    l1, l2, free = (trained(s, k=k) for s in (lesson.setup, lesson.compare[0][1], lesson.compare[1][1]))
    (zeros, total), (l2_zeros, _) = zero_count(penalised(l1.model)), zero_count(penalised(l2.model))
    accuracy, shrink = last(l1).val_acc, mean_abs_weight(l2) / mean_abs_weight(free)
    # measured L1 zeros 83 80 79 84 80 of 96 at test accuracy 0.988 0.988 0.975 0.988 1.000;
    # L2 zeros 0 on all five, mean |w| 0.37 0.36 0.26 0.37 0.36 vs unpenalised 0.87 0.74 0.72 0.76 0.85
    # (×0.42 0.49 0.36 0.48 0.43)
    problems = [f"L1 zeros {zeros} of {total}"] * (zeros < total / 2)
    problems += [f"L1 {accuracy:.3f}"] * (accuracy < 0.9)
    problems += [f"L2 zeros {l2_zeros}"] * (l2_zeros > 0)
    return problems + [f"L2 ×{shrink:.2f}"] * (shrink > 0.6)


def test_l1_zeroes_weights_and_l2_only_shrinks_them():
    assert l1_zeroes_weights(0) == []


@pytest.mark.slow
def test_l1_zeroes_weights_on_five_seeds():
    holds_on_seeds(l1_zeroes_weights)


def over_fits(k: int) -> list[str]:
    lesson = LESSONS["overfitting"]
    free, decayed = trained(lesson.setup, k=k), trained(lesson.compare[0][1], k=k)
    f, d, problems = last(free), last(decayed), []
    if f.train_acc - f.val_acc < 0.15:  # measured train 1.00 vs test 0.68 0.75 0.72 0.75 0.76
        problems.append(f"gap {f.train_acc:.2f} - {f.val_acc:.2f}")
    test_losses = [e.val_loss for e in free.trainer.history.epochs]
    if test_losses[-1] < 3 * min(test_losses):  # measured 13.5 8.7 8.7 7.7 7.2 × its low
        problems.append(f"test loss only ×{test_losses[-1] / min(test_losses):.1f}")
    # measured decayed test loss 0.39 0.43 0.36 0.42 0.36 vs free 5.55 3.91 2.99 3.37 2.40;
    # test accuracy 0.81 0.82 0.85 0.80 0.88 vs free 0.68 0.75 0.72 0.75 0.76
    if d.val_loss >= 0.25 * f.val_loss or d.val_acc <= f.val_acc:
        problems.append(f"decay {d.val_loss:.2f}, {d.val_acc:.2f} vs {f.val_loss:.2f}, {f.val_acc:.2f}")
    return problems


@pytest.mark.slow
def test_few_points_and_a_wide_net_over_fit_and_weight_decay_helps():
    holds_on_seeds(over_fits)


def engines_agree(k: int) -> list[str]:
    gap = trained(LESSONS["engines"].setup, k=k).view.engine_gap()  # both engines: the lesson's link says so
    # measured loss 1.2e-7 6.0e-8 1.2e-7 6.0e-8 6.0e-8, weights 3.0e-7 3.6e-7 4.8e-7 4.8e-7 3.6e-7
    # (with Adam, as the lesson had before, one seed reached 6.4e-5 and 2.9e-4)
    ok = gap["epochs"] == 300 and gap["loss"] < 1e-5 and gap["weights"] < 1e-4
    return [] if ok else [str(gap)]


def test_manual_backprop_and_autograd_train_the_same_network():
    assert engines_agree(0) == []


@pytest.mark.slow
def test_manual_backprop_and_autograd_agree_on_five_seeds():
    holds_on_seeds(engines_agree)


def mnist_in_a_minute(k: int) -> list[str]:
    settings = settings_of(moved(LESSONS["mnist-minute"].setup, k))
    assert settings.hidden == (128,)
    run = MnistRun(load_sample("a test"), replace(settings, device="cpu"))
    run.trainer.fit()
    run.finish()
    accuracy = run.evaluate().accuracy  # measured 0.925 0.919 0.933 0.921 0.917
    view = run.view()
    strokes = neighbour_correlation(first_layer_weights(view.weights, start=view.first_layer_start))
    # measured 0.74 0.74 0.74 0.73 0.74
    return [f"accuracy {accuracy:.3f}"] * (accuracy < 0.90) + [f"strokes {strokes:.2f}"] * (strokes < 0.5)


def test_mnist_in_a_minute():
    assert mnist_in_a_minute(0) == []


@pytest.mark.slow
def test_mnist_in_a_minute_on_five_seeds():
    holds_on_seeds(mnist_in_a_minute)


def teacher_is_learned(k: int) -> list[str]:
    s = settings_of(moved(LESSONS["teacher"].setup, k))  # the student the page trains, as it trains it
    curve = teacher_curve(s.hidden, s.k, s.activation, s.init, s.seed)
    loss, accuracy = curve["train_loss"].tolist(), float(curve["val_acc"][-1])
    # measured first train loss 0.88 0.98 0.82 0.86 0.79 (ln 5 = 1.61), last 0.150 0.198 0.153 0.144
    # 0.142; test accuracy 0.916 0.887 0.909 0.921 0.917
    problems = [f"train loss {loss[0]:.3f} -> {loss[-1]:.3f}"] * (
        not (loss[0] < math.log(5) and loss[-1] < 0.25)
    )
    problems += [f"test accuracy {accuracy:.3f}"] * (accuracy < 0.87)
    flat = last(
        trained(LESSONS["teacher"].compare[0][1], k=k)
    ).val_acc  # measured 0.980 0.995 0.970 0.985 0.980
    return problems + [f"2D {flat:.3f}"] * (flat < 0.95)


@pytest.mark.slow
def test_the_teacher_task_its_curve_and_its_2d_version():
    batch = fb.make_batch(settings_of(LESSONS["teacher"].setup))
    assert batch.X.shape == (8, 16) and set(batch.y) <= set(range(5))
    holds_on_seeds(teacher_is_learned)


def two_blobs(k: int) -> list[str]:
    run = trained(LESSONS["two-blobs"].setup, k=k)
    assert run.settings.engine == "manual" and run.points.classes == 2
    accuracy = last(run).val_acc  # measured 1.000 1.000 0.988 0.988 1.000
    return [f"accuracy {accuracy:.3f}"] * (accuracy < 0.95)


def test_the_numpy_network_separates_two_blobs():
    assert two_blobs(0) == []


@pytest.mark.slow
def test_the_numpy_network_separates_two_blobs_on_five_seeds():
    holds_on_seeds(two_blobs)


def test_a_lesson_key_is_a_link_word():
    for key in LESSONS:
        assert key == key.lower() and all(c.isalnum() or c == "-" for c in key)
