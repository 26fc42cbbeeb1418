"""A link is a promise of the same result: stepped the same way, the same weights to the bit as the
library's run, while the server is busy with other visitors playing (three of them: enough to
interleave their frames with every click), with and without dropout; and a download button
delivers its file while the page plays."""

from dataclasses import replace
from pathlib import Path
from urllib.parse import urlencode

import pytest
import torch

from mlp.io import model_from_bytes
from mlp.lessons.playground import PRESETS, to_query
from mlp.runs.playground import current_run
from tests.harness import button, open_tab, plane_metric, wait_for_app

pytestmark = pytest.mark.browser

DROPOUT = replace(PRESETS["moons"], batch_size=16, dropout=0.3, seed=5)  # batches and masks: RNGs at work
PLAIN = replace(PRESETS["spiral"], seed=7)
CLICKS = ("Epoch", "Step", "Step", "Epoch", "Step")


def tab(browser, url: str):
    return open_tab(browser, url, "2D playground", timeout_ms=240_000)


def step_count(page) -> int:
    return int(plane_metric(page, "Step").inner_text().replace(",", ""))


def advanced(page, before: int) -> None:
    """Wait until the page shows a step count past `before` (a busy server takes its time)."""
    for _ in range(2400):
        if step_count(page) > before:
            return
        page.wait_for_timeout(100)
    raise AssertionError(f"the step count stayed at {before}")


def downloaded_weights(page) -> list[torch.Tensor]:
    page.get_by_text("Export", exact=True).click()
    with page.expect_download() as download:
        page.get_by_role("button", name="Weights (.safetensors)").click()
    model, _ = model_from_bytes(Path(download.value.path()).read_bytes())
    page.get_by_text("Export", exact=True).click()  # closed again
    return list(model.parameters())


def stepped(browser, app_url: str, settings) -> tuple[int, list[torch.Tensor]]:
    """The link opened in a fresh browser, clicked through CLICKS: (steps, the weights it offers)."""
    page = tab(browser, f"{app_url}/playground?" + urlencode(to_query(settings)))
    for name in CLICKS:
        before = step_count(page)
        button(page, name).click()
        advanced(page, before)
        wait_for_app(page)
    result = step_count(page), downloaded_weights(page)
    assert page.locator('[data-testid="stException"]').count() == 0
    page.context.close()
    return result


def alone(settings, steps: int) -> list[torch.Tensor]:
    run = current_run(None, settings)
    run.run(steps)
    return list(run.model.parameters())


@pytest.mark.slow
def test_a_link_gives_the_same_weights_to_the_bit_on_a_busy_server_as_the_library_alone(browser, app_url):
    """The same clicks on the same link, while three others play: the weights of the library's run
    of those steps, to the bit (on an idle server: tests/test_links.py and the hammering test in
    tests/test_page_playground.py)."""
    players = [tab(browser, f"{app_url}/playground?seed={seed}&epochs=100000") for seed in range(3)]
    for page in players:
        page.get_by_role("button", name="Play").click()
    for page in players:
        page.get_by_role("button", name="Pause").wait_for()
    busy = {name: stepped(browser, app_url, s) for name, s in (("dropout", DROPOUT), ("plain", PLAIN))}

    # A download while the page plays: the file arrives, a whole model, from a moment of the run.
    playing = players[0]
    weights = downloaded_weights(playing)
    assert weights and all(torch.isfinite(w).all() for w in weights)
    assert playing.get_by_role("button", name="Pause").count() == 1  # still playing
    for page in players:
        page.context.close()

    for name, settings in (("dropout", DROPOUT), ("plain", PLAIN)):
        steps, loaded = busy[name]
        expected = alone(settings, steps)
        assert all(torch.equal(a, b) for a, b in zip(loaded, expected, strict=True)), name
