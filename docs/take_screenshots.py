"""Retake the README's screenshots from the running app: python -m docs.take_screenshots.

Serves the app on 127.0.0.1 (the MNIST cache left empty, so the page shows the bundled
sample and no path of this machine), drives each page in headless Chromium to a state worth
showing, and writes docs/screenshots/*.png at 1400×900, and the tour's first three stops at 1280×720.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path
from urllib.parse import urlencode

from mlp.curriculum.tour import HOW_AN_MLP_LEARNS
from pages.ui.shell import PRESENT
from tests.harness import chromium, serve_app, wait_for_app

OUT = Path(__file__).parent / "screenshots"


def main() -> None:
    env = {"MLP_PLAYGROUND_DATA": tempfile.mkdtemp(prefix="mlp-screenshots-")}
    with serve_app("screenshots.log", env=env) as url, chromium() as browser:
        tab = browser.new_context(viewport={"width": 1400, "height": 900}).new_page()
        tab.set_default_timeout(120_000)

        tab.goto(url)
        wait_for_app(tab, heading="MLP Playground")
        tab.screenshot(path=str(OUT / "home.png"))

        tab.goto(f"{url}/forward_backward?hidden=6-5&act=relu")
        wait_for_app(tab, heading="Forward & backward, step by step")
        tab.locator(
            "button", has_text=re.compile(r"^dz1$")
        ).first.click()  # backprop through the ReLU: f'(z1) shown
        wait_for_app(tab)
        tab.screenshot(path=str(OUT / "forward_backward.png"))

        tab.goto(f"{url}/playground")
        wait_for_app(tab, heading="2D playground")
        tab.get_by_role("button", name="Play").click()
        canvas = tab.locator("canvas[data-step]").first
        for _ in range(600):  # until about 600 steps have trained (bounded: a minute or two)
            if int(canvas.get_attribute("data-step") or 0) >= 600:
                break
            tab.wait_for_timeout(200)
        tab.get_by_role("button", name="Pause").click()
        wait_for_app(tab)
        tab.screenshot(path=str(OUT / "playground.png"))

        tab.goto(f"{url}/playground?lesson=dead-relu")  # the network view, most units dead
        wait_for_app(tab, heading="2D playground")
        for _ in range(3):
            tab.get_by_role("button", name="Epoch", exact=True).click()
            wait_for_app(tab)
        tab.locator(".st-key-pg_network").scroll_into_view_if_needed()
        tab.mouse.move(0, 0)  # no tooltip left over from the last click
        wait_for_app(tab)
        tab.screenshot(path=str(OUT / "network.png"))

        tab.goto(f"{url}/mnist?epochs=8&device=cpu")
        wait_for_app(tab, heading="MNIST")
        tab.get_by_test_id("stMainBlockContainer").get_by_role("button", name="Start").click()
        tab.get_by_test_id("stProgress").get_by_text("done").wait_for()
        wait_for_app(tab)
        tab.screenshot(path=str(OUT / "mnist.png"))
        tab.get_by_text("First-layer weights").scroll_into_view_if_needed()
        tab.screenshot(path=str(OUT / "mnist-weights.png"))
        touch_shots(browser, url)
        tour_stops(browser, url)
    print(f"wrote {', '.join(sorted(p.name for p in OUT.glob('*.png')))} to {OUT}")


def touch_shots(browser, url: str) -> None:
    """The playground touched: a regression after training, and a unit on the plane with its
    computation at a clicked point."""
    tab = browser.new_context(viewport={"width": 1400, "height": 900}).new_page()
    tab.set_default_timeout(120_000)
    tab.goto(f"{url}/playground?data=reg-gauss&hidden=16-16&act=tanh&lr=0.03")
    wait_for_app(tab, heading="2D playground")
    play_to(tab, 400)
    tab.screenshot(path=str(OUT / "regression.png"))

    tab.goto(f"{url}/playground?data=moons&classes=2&hidden=6-6&act=tanh&lr=0.03")
    wait_for_app(tab, heading="2D playground")
    play_to(tab, 300)
    tab.locator('.mlp-net .unit[data-layer="1"][data-unit="2"]').click()
    canvas = tab.locator(".plane canvas")
    tab.wait_for_function("(c) => c.dataset.focus === '1,2'", arg=canvas.element_handle())
    box = canvas.bounding_box()
    tab.mouse.click(box["x"] + 0.62 * box["width"], box["y"] + 0.38 * box["height"])
    tab.locator(".st-key-pg_unit_math .katex").first.wait_for()
    wait_for_app(tab)
    tab.locator(".st-key-pg_unit_math").scroll_into_view_if_needed()
    tab.mouse.move(0, 0)
    tab.screenshot(path=str(OUT / "unit.png"))


def play_to(tab, steps: int) -> None:
    """Play until the plane has drawn `steps` steps (bounded: two minutes), then pause."""
    tab.get_by_role("button", name="Play").click()
    canvas = tab.locator("canvas[data-step]").first
    for _ in range(600):
        if int(canvas.get_attribute("data-step") or 0) >= steps:
            break
        tab.wait_for_timeout(200)
    tab.get_by_role("button", name="Pause").click()
    wait_for_app(tab)


def tour_stops(browser, url: str) -> None:
    """The guided tour's first three stops as a class sees them: 1280×720, projector mode."""
    tab = browser.new_context(viewport={"width": 1280, "height": 720}).new_page()
    tab.set_default_timeout(120_000)
    for number in (1, 2, 3):
        stop = HOW_AN_MLP_LEARNS.stops[number - 1]
        tab.goto(f"{url}/{stop.page}?" + urlencode(HOW_AN_MLP_LEARNS.link(number) | {PRESENT: "1"}))
        tab.locator(".st-key-tour_card").get_by_text(stop.title).wait_for()
        wait_for_app(tab, heading=None, title=False)
        if number == 2:  # into backprop: dz2 = (P - Y)/N
            tab.keyboard.press("ArrowRight")
            tab.get_by_text("Step 7 of").wait_for()
        if number == 3:  # XOR with no hidden layer: Play for 40 steps, at the stop's pace 8 s
            tab.keyboard.press("Space")
            canvas = tab.locator("canvas[data-step]").first
            for _ in range(300):  # bounded: a minute at most
                if int(canvas.get_attribute("data-step") or 0) >= 40:
                    break
                tab.wait_for_timeout(200)
            tab.keyboard.press("Space")
        wait_for_app(tab, heading=None, title=False)
        tab.screenshot(path=str(OUT / f"tour-{number}.png"))


if __name__ == "__main__":
    main()
