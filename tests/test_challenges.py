"""Every challenge: its known solution meets it, its start (the page's setup) doesn't."""

from dataclasses import replace

import pytest

from mlp.data import load_sample
from mlp.lessons import mnist as mn
from mlp.lessons import playground as pg
from mlp.lessons.catalogue import PAGES
from mlp.lessons.challenges import CHALLENGES, Challenge, Score, parameter_count, playground_scores
from mlp.lessons.mnist_run import MnistRun
from mlp.lessons.playground_run import Playground


@pytest.fixture(scope="module")
def sample():
    return load_sample("the tests use it")


def verdict(challenge: Challenge, setup, sample):
    """Train the setup as its page would and ask the challenge."""
    if setup.page == "playground":
        settings, notes = pg.from_query(setup.query)
        assert notes == []
        run = Playground(settings, pg.make_points(settings))
        run.trainer.fit()
        return challenge.check(settings, playground_scores(run.trainer.history))
    settings, notes = mn.from_query(setup.query)
    assert notes == []
    run = MnistRun(sample, replace(settings, device="cpu"))
    run.trainer.fit()
    run.finish()
    score = Score(run.trainer.epoch, run.evaluate().accuracy, run.evaluate().loss)
    return challenge.check(settings, [score])


def test_there_are_six_challenges_across_the_pages():
    assert len(CHALLENGES) >= 6
    assert {c.page for c in CHALLENGES.values()} <= set(PAGES) and len(
        {c.page for c in CHALLENGES.values()}
    ) >= 2
    for c in CHALLENGES.values():
        assert c.goal.endswith(".") and c.start.page == c.solution.page == c.page


SLOW = {"spiral-100", "moons-20", "mnist-10k"}  # ~1 s of training each: CI runs them, the quick loop not


KEYS = [pytest.param(key, marks=pytest.mark.slow if key in SLOW else ()) for key in CHALLENGES]


@pytest.mark.parametrize("key", KEYS)
def test_the_known_solution_meets_it_and_the_start_does_not(key, sample):
    challenge = CHALLENGES[key]
    solved = verdict(challenge, challenge.solution, sample)
    assert solved.met, solved.text
    assert solved.text.startswith("Met at epoch")
    start = verdict(challenge, challenge.start, sample)
    assert not start.met, start.text


def test_verdicts_say_what_is_missing():
    circles = CHALLENGES["circles-4"]
    settings, _ = pg.from_query(circles.start.query)
    assert (
        circles.check(settings, []).text
        == "These settings don't count: use at most 4 hidden units in all (now 8)."
    )
    other = replace(settings, hidden=(4,), noise=0.0)
    assert "keep the challenge's data" in circles.check(other, []).text
    small = replace(settings, hidden=(4,))
    assert circles.check(small, []).text == "Not yet: train to see how close you get."
    scores = [Score(1, 0.5, 0.7), Score(2, 0.9, 0.3)]
    assert circles.check(small, scores).text == "Not yet: best test accuracy 90.0%, goal ≥ 95.0%."
    assert circles.check(small, [*scores, Score(3, 0.96, 0.1)]).epoch == 3
    sgd = CHALLENGES["spiral-sgd"]  # within 300 epochs: a later success doesn't count
    spiral, _ = pg.from_query(sgd.start.query)
    late = sgd.check(spiral, [Score(300, 0.9, 0.2), Score(301, 1.0, 0.05)])
    assert not late.met and late.text == "Not yet: best test loss 0.200 within 300 epochs, goal < 0.100."


def test_parameter_count_matches_the_model():
    assert parameter_count([2, 16, 3]) == 99 and parameter_count([784, 12, 10]) == 9550
