"""A lecture hall on one server (bench/load.py): the targets a hosted demo link must meet.

K visitors play the 2D playground (each their own seed) while MNIST runs start at once; the
browsers run on the same 2 cores as the server, so these are the numbers a class would feel.
It prints the table (docs/hosting.md's comes from `python -m bench.load`).
"""

import pytest

from bench.load import heavy_visitor, lecture_hall, report
from tests.harness import ARTIFACTS

pytestmark = [pytest.mark.browser, pytest.mark.load, pytest.mark.slow, pytest.mark.timeout(900)]


# What is asserted is behaviour a class would notice, not a quiet machine's rates: every visitor
# sees frames (none starves), the health check answers, a click lands. The targets for this
# machine (the slowest of 8 at 1 frame/s, of 16 at 0.3, the health check's p95 under 1 s) are
# what `python -m bench.load` reports as met or missed, and docs/hosting.md gives its runs: six
# runs of this fixture gave the slowest of 8 1.47-3.13 frames/s, of 16 0.60-1.60, a p95 of
# 0.07-0.32 s; a visitor starved behind the others (before frames took turns) got 0.01.
TARGETS = {"fps at 8": 1.0, "fps at 16": 0.3, "health p95 at 16": 1.0}  # printed, not asserted
VISITORS = 8  # playing at once (bench.load: 1, 8 and 16)
STARVED_FPS = 0.1  # a frame in 10 s: a visitor left out
HEALTH_STUCK_S = 5.0  # a health check this slow: the server stopped answering


@pytest.fixture(scope="module")
def hall(browser):
    # Shorter than docs/hosting.md's run (python -m bench.load): MNIST runs of 1 epoch, 6 visitors
    # coming and going 3 at a time; the suite's time is CI's budget (with 20 visitors, 10 at a
    # time, this fixture once took over 900 s here).
    # Eight visitors: what is asserted (none starves, the health check answers, a click lands)
    # is the same line of turns at eight as at sixteen, and bench.load measures both. Sixteen
    # cost CI 325-415 s, nearly all of it the tabs' loading (16 playgrounds opening at once on
    # these 2 cores took 260 s, ~12 CPU-seconds of Chromium and server a tab); the rates at
    # sixteen are docs/hosting.md's and docs/performance.md's, from the bench.
    # Without the report's rates (an MNIST run alone, the machine's speed): nothing here asserts them.
    # Four visitors press Pause, one after another, while the other four play.
    # The visitors' tabs share one browser context (tests/harness.py's shared_context): each is a
    # session of its own as before, at a third of the browser's CPU a tab; the students' browsers
    # are their own machines, and here every CPU-second Chromium spends is the server's.
    rows, memory = lecture_hall(
        [VISITORS],
        seconds=10,
        mnist=2,
        visitors=6,
        browser=browser,
        epochs=1,
        batch=3,
        rates=False,
        pauses=4,
        one_context=True,
    )
    text = report(rows, memory) + f"\nthe targets on a quiet machine (bench.load reports them): {TARGETS}"
    print("\n" + text)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "load-report.txt").write_text(text + "\n")  # CI keeps the table with its logs
    return {row["sessions"]: row for row in rows}, memory


def test_eight_visitors_none_starves_and_the_health_check_answers(hall):
    rows, _ = hall
    assert rows[VISITORS]["fps min"] > STARVED_FPS, rows[VISITORS]
    assert rows[VISITORS]["health p95 s"] < HEALTH_STUCK_S, rows[VISITORS]


def test_a_click_still_lands_under_load(hall):
    rows, _ = hall
    assert rows[VISITORS]["pause max s"] <= 20.0, rows[VISITORS]


# A server's RSS read after visitors leave moves by up to ~15 MB either way with nothing leaking
# (the allocator keeps or hands back its arenas): over ten CI runs, 5 visitors more changed it by
# -45 to +12 MB, -6 on average. The suite's few visitors can't resolve 100 MB per 50 finer than
# that; python -m bench.load's 50 visitors (docs/hosting.md) do.
RSS_NOISE_MB = 20

# The three's frames/s beside the heavy visitor, against beside an ordinary fourth (the control).
# Without the control, 0.5x of their rate alone held while a frame was capped at 10/s; uncapped
# (up to 40/s shared), a CI run gave 0.45x (11.7 -> 5.3): the fourth browser on these cores
# took that, not the heavy frames. Against the control, runs here gave 0.70-0.76x (0.84-0.88x
# with two busy loops besides); a class
# frozen behind the heavy visitor (before turns went by compute) got 0.01x.
HEAVY_VS_ORDINARY = 0.4


def test_memory_grows_at_most_100_mb_per_50_visitors_and_levels_off(hall):
    _, memory = hall
    churn, batch = memory["churn MB"], memory["churn batch"]
    visitors = batch * (len(churn) - 1)  # who came and went between the first reading and the last
    assert churn[-1] - churn[0] <= 100 * visitors / 50 + RSS_NOISE_MB, churn
    assert memory["rss after MB"] <= memory["rss peak MB"] + 10, memory


def test_a_heavy_visitor_slows_itself_not_the_class(browser):
    """Three visitors play the default playground; a fourth plays the sidebar's largest setup
    (8 × 128 hidden, 2,000 points, 2,000 steps a second, both engines). Before frames had a compute
    budget and turns went by arrival, the three dropped from 9.6 to 0.1 frames a second.

    Any fourth browser on these 2 cores slows the three: alone, each now gets up to its share of
    the replica's 40 frames/s, and the browsers, not the server, use most of the cores. So the
    heavy visitor is held against the control, an ordinary fourth visitor playing the default."""
    seen = heavy_visitor(browser, seconds=8, one_context=True)  # tabs as the hall's
    text = (
        "frames/s of the three alone: "
        + ", ".join(f"{f:.1f}" for f in seen["alone"])
        + "; beside an ordinary fourth: "
        + ", ".join(f"{f:.1f}" for f in seen["beside"])
        + "; beside the heavy visitor: "
        + ", ".join(f"{f:.1f}" for f in seen["during"])
        + f"; the heavy visitor: {seen['heavy']:.2f}; its plane says: {seen['note']!r}"
    )
    print("\n" + text)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "load-heavy.txt").write_text(text + "\n")
    for beside, during in zip(seen["beside"], seen["during"], strict=True):
        assert during >= HEAVY_VS_ORDINARY * beside, text
    assert seen["heavy"] >= 0.5, text
    assert "steps a second" in seen["note"] and "50 ms" in seen["note"], text
