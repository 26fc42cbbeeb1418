"""Every lesson keeps its promise: its setup, loaded as the page loads it, trained by the library.

A promise is checked on ten seeds: offset k = 0..9 added to every setup's `seed` (initial
weights, batch order) and `dseed` (the points), nothing else changed, as a class trying other
seeds would. It must hold on at least 9 of them (the slow tests); the quick ones try offset 0.
Thresholds are stated here; the values measured at offsets 0..9 are in comments. And each run
the slow tests try a few seeds nobody tuned on, drawn at random and printed (the last test).
"""

import math
import os
import random
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
from tests.seeds import misses

READERS = {"playground": pg.from_query, "forward_backward": fb.from_query, "mnist": mn.from_query}


def settings_of(setup: Setup):
    settings, notes = READERS[setup.page]({k: v for k, v in setup.query.items() if k != COMPARE})
    assert notes == []  # a lesson's link is read without a single complaint
    return settings


SEEDS = range(10)  # offsets added to each setup's seed and dseed
AT_LEAST = 9  # of the ten: a promise may miss on one seed, never on two


def moved(setup: Setup, k: int) -> Setup:
    """The setup with k added to its seeds: other initial weights, batches and points."""
    seeds = {key: str(int(setup.query[key]) + k) for key in ("seed", "dseed") if key in setup.query}
    return Setup(setup.page, setup.query | seeds)


def holds_on_seeds(promise: Callable[[int], list[str]]) -> None:
    """`promise(k)` says what failed at offset k (nothing if it held); it holds on ≥ AT_LEAST."""
    failed = misses(promise, SEEDS)  # the seeds in parallel, a process per core (tests/seeds.py)
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
    # measured: no hidden layer 0.512 0.475 0.562 0.537 0.412 0.613 0.575 0.637 0.537 0.537;
    # 8 tanh units 1.000 0.988 1.000 0.963 1.000 0.963 0.988 0.988 0.975 0.963 (4 units, as the
    # lesson had, stalled at 86-89% on 3 of 20 seeds)
    return [f"line {flat:.3f}"] * (flat >= 0.80) + [f"hidden layer {bent:.3f}"] * (bent < 0.90)


def test_xor_needs_a_hidden_layer():
    assert xor_needs_a_hidden_layer(0) == []


@pytest.mark.slow
def test_xor_needs_a_hidden_layer_on_ten_seeds():
    holds_on_seeds(xor_needs_a_hidden_layer)


def circles_need_squares_or_a_hidden_layer(k: int) -> list[str]:
    lesson = LESSONS["circle-features"]
    flat, squared = trained(lesson.setup, k=k), trained(lesson.compare[0][1], k=k)
    assert squared.model.config.d_in == 4 and squared.settings.hidden == ()
    line, circle = last(flat).val_acc, last(squared).val_acc
    # measured: x1, x2 only 0.475 0.550 0.575 0.438 0.537 0.500 0.512 0.525 0.512 0.550;
    # with x1², x2² 1.000 0.988 0.975 0.975 1.000 1.000 1.000 1.000 0.988 1.000
    return [f"line {line:.3f}"] * (line >= 0.70) + [f"with x1², x2² {circle:.3f}"] * (circle < 0.95)


def test_circles_need_squares_or_a_hidden_layer():
    assert circles_need_squares_or_a_hidden_layer(0) == []


@pytest.mark.slow
def test_circles_need_squares_or_a_hidden_layer_on_ten_seeds():
    holds_on_seeds(circles_need_squares_or_a_hidden_layer)


def bumps_need_hidden_units(k: int) -> list[str]:
    lesson = LESSONS["regression-bumps"]
    flat, bent = trained(lesson.setup, k=k), trained(lesson.compare[0][1], k=k)
    assert flat.trainer.cfg.loss == bent.trainer.cfg.loss == "mse" and flat.model.config.d_out == 1
    plane, bumps = last(flat).val_acc, last(bent).val_acc  # a regression's val_acc is its test R²
    # measured: no hidden layer -0.025 0.031 -0.002 0.013 0.012 0.016 0.007 0.012 -0.116 0.022;
    # 16-16 tanh 0.962 0.949 0.943 0.954 0.967 0.978 0.930 0.960 0.965 0.940
    return [f"plane R² {plane:.3f}"] * (plane >= 0.3) + [f"hidden layers R² {bumps:.3f}"] * (bumps < 0.8)


def test_bumps_need_hidden_units():
    assert bumps_need_hidden_units(0) == []


@pytest.mark.slow
def test_bumps_need_hidden_units_on_ten_seeds():
    holds_on_seeds(bumps_need_hidden_units)


def depth_beats_width_early(k: int) -> list[str]:
    lesson = LESSONS["width-depth"]
    wide, deep = trained(lesson.setup, k=k), trained(lesson.compare[0][1], k=k)
    count = [sum(p.numel() for p in run.model.parameters()) for run in (wide, deep)]
    assert count == [365, 365]
    w, d = last(wide), last(deep)
    # measured test accuracy wide 0.900 0.920 0.905 0.855 0.900 0.905 0.910 0.875 0.895 0.910,
    # deep 0.960 0.955 0.970 0.960 0.975 0.985 0.955 0.955 0.955 0.980; test loss wide 0.28-0.38,
    # deep 0.11-0.30. Three arms and 13 vs 6-6 units, as the lesson had, held on 14 of 20 seeds:
    # small nets on 120 test points are a coin toss; five arms on 200 points held on 40 of 40
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
        problems.append(f"lr = 10 {high.trainer.status}")  # measured: diverged on all ten
    low = trained(lesson.compare[0][1], k=k)
    losses = [e.train_loss for e in low.trainer.history.epochs]
    # measured final / first train loss 0.965 0.970 0.983 0.987 0.937 0.974 0.947 0.980 0.900 0.989
    if not (low.trainer.status == "done" and losses[-1] > 0.85 * losses[0]):
        problems.append(f"lr = 0.0001 {losses[-1]:.3f} from {losses[0]:.3f}")
    middle = last(trained(lesson.compare[1][1], k=k)).val_acc  # measured 0.975-1.000
    return problems + [f"lr = 0.3 {middle:.3f}"] * (middle < 0.95)


def test_too_high_a_learning_rate_explodes_and_too_low_a_one_crawls():
    assert learning_rates(0) == []


@pytest.mark.slow
def test_learning_rates_on_ten_seeds():
    holds_on_seeds(learning_rates)


def relus_die(k: int) -> list[str]:
    lesson = LESSONS["dead-relu"]
    relu, leaky = trained(lesson.setup, k=k), trained(lesson.compare[0][1], k=k)
    dead, guess, kept = hidden_dead_share(relu), last(relu).val_acc, last(leaky).val_acc
    # measured dead share 0.70 0.58 0.73 0.58 0.56 0.73 0.77 0.55 0.61 0.69, ReLU test accuracy
    # 0.500 on all ten; leaky ReLU 0.988 0.988 0.975 0.988 0.975 0.988 1.000 0.988 1.000 0.950 (its
    # units sit on their flat side as often, but its slope of 0.01 still passes gradient). Offsets
    # 2000-2099: below 0.9 on 15 of 100 (0.50-0.89); the lesson says "about one in seven".
    problems = [f"dead {dead:.2f}"] * (dead < 0.5) + [f"ReLU {guess:.3f}"] * (guess > 0.6)
    return problems + [f"leaky {kept:.3f}"] * (kept < 0.9)


@pytest.mark.slow
def test_a_large_learning_rate_kills_relus_and_leaky_relus_survive():
    holds_on_seeds(relus_die)


def small_init_stalls(k: int) -> list[str]:
    lesson = LESSONS["init"]
    spread = activation_spread(depth=10, width=256, seed=k)
    shrunk, kept = spread["normal"][-1] / spread["normal"][0], spread["kaiming"][-1] / spread["kaiming"][0]
    # measured ×0.9e-6-1.7e-6 (each layer ×0.26), He ×0.73 0.96 0.89 0.58 0.85 1.08 0.72 0.94 0.97 1.04
    problems = [f"N(0, 0.02) ×{shrunk:.2g}"] * (shrunk >= 1e-3) + [f"He ×{kept:.2g}"] * (not 0.5 <= kept <= 2)
    small, he = last(trained(lesson.compare[0][1], k=k)), last(trained(lesson.compare[1][1], k=k))
    # measured train loss 0.6933-0.6945 at 0.500 test accuracy on all ten (ln 2 = 0.6931)
    if abs(small.train_loss - math.log(2)) >= 0.01 or small.val_acc > 0.55:
        problems.append(f"small init {small.train_loss:.4f}, {small.val_acc:.3f}")
    # measured He test accuracy 0.963-1.000
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
    # measured L1 zeros 83 80 79 84 80 80 80 79 85 85 of 96 at test accuracy 0.963-1.000;
    # L2 zeros 0 on all ten, mean |w| ×0.42 0.49 0.36 0.48 0.43 0.40 0.44 0.34 0.44 0.40 the
    # unpenalised run's
    problems = [f"L1 zeros {zeros} of {total}"] * (zeros < total / 2)
    problems += [f"L1 {accuracy:.3f}"] * (accuracy < 0.9)
    problems += [f"L2 zeros {l2_zeros}"] * (l2_zeros > 0)
    return problems + [f"L2 ×{shrink:.2f}"] * (shrink > 0.6)


def test_l1_zeroes_weights_and_l2_only_shrinks_them():
    assert l1_zeroes_weights(0) == []


@pytest.mark.slow
def test_l1_zeroes_weights_on_ten_seeds():
    holds_on_seeds(l1_zeroes_weights)


def over_fits(k: int) -> list[str]:
    lesson = LESSONS["overfitting"]
    free, decayed = trained(lesson.setup, k=k), trained(lesson.compare[0][1], k=k)
    f, d, problems = last(free), last(decayed), []
    if f.train_acc - f.val_acc < 0.10:  # measured a gap of 0.17-0.32 (0.14-0.32 on 30 others)
        problems.append(f"gap {f.train_acc:.2f} - {f.val_acc:.2f}")
    free_losses = [e.val_loss for e in free.trainer.history.epochs]
    if free_losses[-1] < 3 * min(free_losses):  # measured 13.5 8.7 8.2 7.0 6.4 9.1 4.9 6.2 15.1 5.0 × its low
        problems.append(f"test loss only ×{free_losses[-1] / min(free_losses):.1f}")
    # measured decayed test loss ×1.01-1.10 its low, ×0.07-0.21 the free net's (0.36-0.46 vs
    # 1.84-5.57). Test accuracy +0.14 0.07 0.17 0.05 0.13 0.04 0.04 0.02 0.01 0.01, but -0.03 to
    # +0.18 on offsets 500-529: not promised (the lesson says "usually", and why)
    decayed_losses = [e.val_loss for e in decayed.trainer.history.epochs]
    if decayed_losses[-1] > 1.5 * min(decayed_losses) or d.val_loss >= 0.5 * f.val_loss:
        problems.append(f"decay {d.val_loss:.2f} (low {min(decayed_losses):.2f}) vs {f.val_loss:.2f}")
    return problems


@pytest.mark.slow
def test_few_points_and_a_wide_net_over_fit_and_weight_decay_helps():
    holds_on_seeds(over_fits)


def engines_agree(k: int) -> list[str]:
    gap = trained(LESSONS["engines"].setup, k=k).view.engine_gap()  # both engines: the lesson's link says so
    # measured loss 3.0e-8-1.2e-7, weights 2.4e-7-1.1e-6 on ten seeds
    # (with Adam, as the lesson had before, one seed reached 6.4e-5 and 2.9e-4)
    ok = gap["epochs"] == 300 and gap["loss"] < 1e-5 and gap["weights"] < 1e-4
    return [] if ok else [str(gap)]


def test_manual_backprop_and_autograd_train_the_same_network():
    assert engines_agree(0) == []


@pytest.mark.slow
def test_manual_backprop_and_autograd_agree_on_ten_seeds():
    holds_on_seeds(engines_agree)


def mnist_in_a_minute(k: int) -> list[str]:
    settings = settings_of(moved(LESSONS["mnist-minute"].setup, k))
    assert settings.hidden == (128,)
    run = MnistRun(load_sample("a test"), replace(settings, device="cpu"))
    run.trainer.fit()
    run.finish()
    accuracy = run.evaluate().accuracy  # measured 0.910-0.933 on ten seeds
    view = run.view()
    strokes = neighbour_correlation(first_layer_weights(view.weights, start=view.first_layer_start))
    # measured 0.73-0.75
    return [f"accuracy {accuracy:.3f}"] * (accuracy < 0.90) + [f"strokes {strokes:.2f}"] * (strokes < 0.5)


def test_mnist_in_a_minute():
    assert mnist_in_a_minute(0) == []


@pytest.mark.slow
def test_mnist_in_a_minute_on_ten_seeds():
    holds_on_seeds(mnist_in_a_minute)


def teacher_is_learned(k: int) -> list[str]:
    s = settings_of(moved(LESSONS["teacher"].setup, k))  # the student the page trains, as it trains it
    curve = teacher_curve(s.hidden, s.k, s.activation, s.init, s.seed)
    loss, accuracy = curve["train_loss"].tolist(), float(curve["val_acc"][-1])
    # measured first train loss 0.79-0.98 (ln 5 = 1.61), last 0.142-0.199; test accuracy
    # 0.887-0.920 on ten seeds
    problems = [f"train loss {loss[0]:.3f} -> {loss[-1]:.3f}"] * (
        not (loss[0] < math.log(5) and loss[-1] < 0.25)
    )
    problems += [f"test accuracy {accuracy:.3f}"] * (accuracy < 0.87)
    flat = last(trained(LESSONS["teacher"].compare[0][1], k=k)).val_acc  # measured 0.970-1.000
    return problems + [f"2D {flat:.3f}"] * (flat < 0.95)


@pytest.mark.slow
def test_the_teacher_task_its_curve_and_its_2d_version():
    batch = fb.make_batch(settings_of(LESSONS["teacher"].setup))
    assert batch.X.shape == (8, 16) and set(batch.y) <= set(range(5))
    holds_on_seeds(teacher_is_learned)


def two_blobs(k: int) -> list[str]:
    run = trained(LESSONS["two-blobs"].setup, k=k)
    assert run.settings.engine == "manual" and run.points.classes == 2
    accuracy = last(run).val_acc  # measured 0.988-1.000 on ten seeds
    return [f"accuracy {accuracy:.3f}"] * (accuracy < 0.95)


def test_the_numpy_network_separates_two_blobs():
    assert two_blobs(0) == []


@pytest.mark.slow
def test_the_numpy_network_separates_two_blobs_on_ten_seeds():
    holds_on_seeds(two_blobs)


def test_a_lesson_key_is_a_link_word():
    for key in LESSONS:
        assert key == key.lower() and all(c.isalnum() or c == "-" for c in key)


PROMISES = {
    "xor-line": xor_needs_a_hidden_layer,
    "circle-features": circles_need_squares_or_a_hidden_layer,
    "regression-bumps": bumps_need_hidden_units,
    "width-depth": depth_beats_width_early,
    "learning-rate": learning_rates,
    "dead-relu": relus_die,
    "init": small_init_stalls,
    "overfitting": over_fits,
    "l1-zeros": l1_zeroes_weights,
    "engines": engines_agree,
    "mnist-minute": mnist_in_a_minute,
    "teacher": teacher_is_learned,
    "two-blobs": two_blobs,
}
UNTUNED = 4  # seeds drawn per promise each run; it must hold on at least half of them


def untuned_seeds() -> list[int]:
    """Offsets nobody tuned a lesson on: MLP_LESSON_SEEDS="123,4567" replays a run's draw."""
    if chosen := os.environ.get("MLP_LESSON_SEEDS"):
        return [int(k) for k in chosen.split(",")]
    return random.SystemRandom().sample(range(100, 100_000), UNTUNED)


def test_every_lesson_has_its_promise_checked_here():
    assert set(PROMISES) == set(LESSONS)


@pytest.mark.slow
def test_every_promise_on_seeds_drawn_at_random(capsys):
    """A weak promise shows up here before a class finds it: each run draws new seeds and prints
    what each promise did on them. It fails only when a promise misses on more than half of
    them; a single miss is printed for whoever reads the log (one in seven is dead-relu's rate)."""
    seeds = untuned_seeds()
    missed = {key: misses(promise, seeds) for key, promise in PROMISES.items()}
    with capsys.disabled():
        print(
            f"\nlesson promises on seeds {seeds} (MLP_LESSON_SEEDS={','.join(map(str, seeds))} replays them)"
        )
        for key, failed in missed.items():
            print(f"  {key}: held on {len(seeds) - len(failed)} of {len(seeds)}", failed or "")
    weak = {key: failed for key, failed in missed.items() if len(failed) > len(seeds) / 2}
    assert not weak, weak
