"""Presenter mode at 1280×720, light and dark: each page's main visual fits the first screen.

Also the instructor's choice of controls: a link with show= opens a sidebar with only those;
the playground's keyboard; and a phone's first screen. Screenshots go to tests/artifacts/presenter-*.png.
"""

import re

import pytest

from tests.conftest import ARTIFACTS, wait_for_app
from tests.harness import PLANE_STEP_JS

SCREEN = {"width": 1280, "height": 720}
MIN_CHART_TEXT_PX = 16


def first_screen(tab, selector: str) -> dict:
    """The element's box, asserted to lie whole within the first screen."""
    box = tab.locator(selector).first.bounding_box()
    assert box is not None, f"{selector} is not drawn"
    inside = box["y"] >= 0 and box["y"] + box["height"] <= SCREEN["height"]
    inside = inside and box["x"] >= 0 and box["x"] + box["width"] <= SCREEN["width"]
    if not inside:  # what pushed it out is on the screenshot
        tab.screenshot(path=str(ARTIFACTS / "FAILED-presenter-first-screen.png"))
    assert inside, (selector, box)
    return box


def smallest_chart_text(tab) -> float:
    """The smallest font size (px) of the text in the charts on screen."""
    return tab.evaluate(
        """() => Math.min(...[...document.querySelectorAll('.js-plotly-plot text')]
              .filter((t) => t.textContent.trim() && t.getBoundingClientRect().bottom <= innerHeight)
              .map((t) => parseFloat(getComputedStyle(t).fontSize)))"""
    )


@pytest.fixture(params=["light", "dark"])
def screen(request, browser):
    context = browser.new_context(viewport=SCREEN, color_scheme=request.param)
    tab = context.new_page()
    tab.set_default_timeout(90_000)
    yield tab, request.param
    context.close()


@pytest.mark.browser
def test_the_playground_shows_its_boundary_and_loss_in_the_first_screen(screen, app_url):
    tab, scheme = screen
    tab.goto(f"{app_url}/playground?present=1")
    wait_for_app(tab, heading="2D playground")
    tab.locator("canvas[data-step]").first.wait_for()
    first_screen(tab, "canvas[data-step]")
    first_screen(tab, ".st-key-pg_controls")
    first_screen(tab, '.plane .legend .chip[data-tool="erase"]')  # the touch tool, its last button
    first_screen(tab, '.st-key-pg_network svg[role="img"]')  # TensorFlow Playground's layout: all three
    curves = first_screen(tab, ".st-key-pg_curves .js-plotly-plot")
    assert curves["width"] >= 300, curves  # wide enough for its ticks not to run into each other
    assert smallest_chart_text(tab) >= MIN_CHART_TEXT_PX
    tab.screenshot(path=str(ARTIFACTS / f"presenter-playground-{scheme}.png"))


def focus_in(tab, key: str) -> bool:
    return tab.evaluate(f"() => !!document.activeElement?.closest('.st-key-{key}')")


@pytest.mark.browser
def test_the_playground_plays_on_space_steps_on_s_and_keeps_the_focus_on_play(page, app_url):
    page.goto(f"{app_url}/playground")
    wait_for_app(page, heading="2D playground")
    page.locator("canvas[data-step]").first.wait_for()
    bar = page.locator(".st-key-pg_play")
    bar.get_by_role("button", name="Play").focus()
    page.keyboard.press("Enter")  # Play and Pause are one button: the focus stays where it was
    bar.get_by_role("button", name="Pause").wait_for()
    wait_for_app(page)
    assert focus_in(page, "pg_play")
    page.keyboard.press("Space")
    bar.get_by_role("button", name="Play").wait_for()
    wait_for_app(page)
    assert focus_in(page, "pg_play")
    page.evaluate("() => document.activeElement.blur()")  # the keys work from anywhere on the page
    page.keyboard.press("Space")
    bar.get_by_role("button", name="Pause").wait_for()
    page.keyboard.press("Space")
    bar.get_by_role("button", name="Play").wait_for()
    wait_for_app(page)
    step = page.evaluate(PLANE_STEP_JS)
    page.keyboard.press("s")
    page.wait_for_function(f"() => {PLANE_STEP_JS} === '{int(step) + 1}'")  # exactly one step


@pytest.mark.browser
def test_a_phone_shows_the_plane_in_its_first_screen(browser, app_url):
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    tab = context.new_page()
    tab.set_default_timeout(90_000)
    try:
        tab.goto(f"{app_url}/playground")
        wait_for_app(tab, heading="2D playground")
        box = tab.locator("canvas[data-step]").first.bounding_box()
        assert box is not None and 0 <= box["y"] < 844 - 100, box  # its top, and more, in the first screen
        assert box["x"] >= 0 and box["x"] + box["width"] <= 390, box
        tab.screenshot(path=str(ARTIFACTS / "phone-playground.png"))
    finally:
        context.close()


@pytest.mark.browser
def test_a_link_can_show_students_only_the_controls_a_lesson_needs(page, app_url):
    page.goto(f"{app_url}/playground?show=lr,bs&lr=0.03")
    wait_for_app(page, heading="2D playground")
    page.wait_for_url(re.compile(r"show=lr(%2C|,)bs"))  # the choice stays in the link
    assert "lr=0.03" in page.url  # hidden or not, every setting still applies and is linked
    sidebar = page.get_by_test_id("stSidebar")
    for label in ("Learning rate", "Batch size"):  # the sidebar drawn (it arrives in pieces)
        sidebar.get_by_test_id("stWidgetLabel").filter(has_text=label).first.wait_for(state="visible")
    for label in ("Optimizer", "Hidden widths", "Activation", "Data set"):
        sidebar.get_by_test_id("stWidgetLabel").filter(has_text=label).first.wait_for(state="hidden")
    labels = [e.inner_text() for e in sidebar.get_by_test_id("stWidgetLabel").all() if e.is_visible()]
    assert "Learning rate" in labels and "Batch size" in labels, labels


@pytest.mark.browser
def test_mnist_shows_its_live_curves_in_the_first_screen_while_training(screen, app_url):
    tab, scheme = screen
    tab.goto(f"{app_url}/mnist?present=1&hidden=512-512&epochs=100&bs=16&device=cpu")
    wait_for_app(tab, heading="MNIST")
    assert tab.get_by_text("Example digits").count() == 0  # secondary panels give way
    tab.get_by_role("button", name="Start").click()
    tab.get_by_test_id("stProgress").get_by_text("running").wait_for()
    # A run that queued behind another test's shows why until its numbers next redraw (≤ 2 s).
    tab.get_by_text("Waiting for a free training slot").wait_for(state="detached")
    # Live curves: the first epoch's validation marker drawn, the train curve up to it.
    tab.locator(".st-key-mn_curves .scatterlayer .point").first.wait_for()
    first_screen(tab, '[data-testid="stProgress"]')
    first_screen(tab, ".st-key-mn_curves .js-plotly-plot")  # keyed: a guided tour points at it
    assert smallest_chart_text(tab) >= MIN_CHART_TEXT_PX
    tab.screenshot(path=str(ARTIFACTS / f"presenter-mnist-{scheme}.png"))
    tab.get_by_test_id("stMainBlockContainer").get_by_role("button", name="Stop").click()
    tab.get_by_test_id("stProgress").get_by_text("stopped").wait_for()


@pytest.mark.browser
def test_the_step_page_shows_the_equation_and_the_numbers_in_the_first_screen(screen, app_url):
    """The step's equation and its heatmaps in the first screen; the shape diagram below them
    (full width, above the code) with text of at least 16 px."""
    tab, scheme = screen
    tab.goto(f"{app_url}/forward_backward?present=1")
    wait_for_app(tab, heading="Forward & backward, step by step")
    first_screen(tab, '[data-testid="stMainBlockContainer"] .katex')
    first_screen(tab, ".st-key-fb_heatmaps")
    smallest = tab.evaluate(
        """() => { const svg = document.querySelector('svg[role="img"]');
             const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
             const texts = [...svg.querySelectorAll('text')];
             const sizes = texts.map((t) => parseFloat(t.getAttribute('font-size')));
             return Math.min(...sizes) * scale; }"""
    )
    assert smallest >= MIN_CHART_TEXT_PX
    tab.screenshot(path=str(ARTIFACTS / f"presenter-forward_backward-{scheme}.png"))


@pytest.mark.browser
def test_home_shows_a_picture_in_the_first_screen_and_challenge_titles_whole(page, app_url):
    page.set_viewport_size(SCREEN)
    page.goto(f"{app_url}/?present=1")
    wait_for_app(page, heading="MLP Playground")
    box = page.locator(".st-key-home_picture svg").first.bounding_box()
    assert box is not None and box["y"] + box["height"] / 2 < SCREEN["height"], box  # most of it, at least
    links = page.locator(".st-key-home_challenges_links a")
    links.first.wait_for()
    cut = links.evaluate_all(
        "(as) => as.filter((a) => [...a.querySelectorAll('p')]"
        "  .some((p) => p.scrollWidth > p.clientWidth + 1)).map((a) => a.innerText)"
    )
    assert links.count() >= 3 and not cut, cut  # "…at most 4 hid" no more
