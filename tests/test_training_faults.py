"""Training faults on a shared server: a visitor closes their tab mid-run and everyone else is
served; the run they left frees its slot once their session is gone.

Runs its own server with one training slot (so a second run must queue behind the first) and
a short `disconnectedSessionTTL` (Streamlit keeps a closed tab's session 120 s by default, so a
visitor whose Wi-Fi drops comes back to their run).
"""

import re

import pytest
from playwright.sync_api import expect

from tests.harness import button, open_tab, plane_metric, serve_app

pytestmark = [pytest.mark.browser, pytest.mark.slow]

TTL = 10  # seconds a closed tab's session is kept (and its run, unwatched)

TIMEOUT_MS = 90_000  # per browser action: a busy suite is slow, a hang still fails


@pytest.fixture
def one_slot_app(browser):
    with serve_app(
        "streamlit-faults.log",
        {"server.disconnectedSessionTTL": str(TTL)},
        env={"MLP_PLAYGROUND_TRAINING_JOBS": "1"},
    ) as url:
        yield url


def start(tab) -> None:
    tab.get_by_test_id("stMainBlockContainer").get_by_role("button", name="Start").click()


def test_a_tab_closed_mid_training_frees_its_slot_and_the_others_are_served(browser, one_slot_app):
    # Minutes of training, however fast fit gets (784-128-10 at batch 16 could end before the next tab queued)
    leaver = open_tab(browser, f"{one_slot_app}/mnist?hidden=512-512&epochs=100&bs=16", "MNIST", TIMEOUT_MS)
    start(leaver)
    leaver.get_by_test_id("stProgress").get_by_text(re.compile("running")).wait_for()

    waiter = open_tab(browser, f"{one_slot_app}/mnist?epochs=1", "MNIST", TIMEOUT_MS)
    start(waiter)
    waiter.get_by_text("Waiting for a free training slot on the server: yours is next.").wait_for()

    player = open_tab(browser, f"{one_slot_app}/playground?seed=3", "2D playground", TIMEOUT_MS)
    button(player, "Step").click()
    expect(plane_metric(player, "Step")).to_have_text("1")  # served meanwhile

    leaver.context.close()  # mid-epoch, without pressing Stop

    # Once the session outlives its TTL, its run is cancelled and the queued one trains to the end.
    waiter.get_by_test_id("stProgress").get_by_text(re.compile("done")).wait_for(timeout=180_000)
    waiter.get_by_text("Test accuracy").first.wait_for()
    button(player, "Step").click()
    expect(plane_metric(player, "Step")).to_have_text("2")
    for tab in (waiter, player):
        assert tab.locator('[data-testid="stException"]').count() == 0
        tab.context.close()
