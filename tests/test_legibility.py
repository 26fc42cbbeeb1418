"""Every page legible and accessible, light and dark, normal and projector mode, at 1280×720.

Each page in both schemes and both modes (eight views, see VIEWS), each visited once, every
check run on it in each of its tabs with its expanders open (tests/legibility.py): axe-core
finds no WCAG 2.1 A/AA violation; the text in plotly charts, which axe can't read, has 4.5:1
contrast with what is drawn behind it and is at least 11 px (16 px in projector mode); and, in
light mode, no text is cut off by its box. Then the charts that only a run draws (the teacher
task's curves, MNIST's probability bars), the same way.
A failure lists every finding with its element and its numbers.
"""

import re
import time

import pytest

from tests.conftest import ARTIFACTS
from tests.legibility import legibility_findings, report, settle

SCREEN = {"width": 1280, "height": 720}
PAGES = {"home": "", "forward_backward": "forward_backward", "playground": "playground", "mnist": "mnist"}
# Each page in each scheme once and in each mode once: light with one mode, dark with the other,
# the pairing alternating from page to page, so every (scheme, mode) pair is seen on two pages.
# What a view checks depends on the scheme (contrast; cut-off text, light only) and on the mode
# (sizes, projector), each one of them on every page: eight views, not all sixteen, in CI's time.
VIEWS = [
    pytest.param(page, scheme, projector, id=f"{page}-{scheme}-{'projector' if projector else 'normal'}")
    for i, page in enumerate(PAGES)
    for scheme, projector in (("light", i % 2 == 1), ("dark", i % 2 == 0))
]


@pytest.fixture
def screen(browser, request):
    """A visitor's tab at 1280×720 in the view's colour scheme; a screenshot if the test fails."""
    scheme = request.node.callspec.params["scheme"]
    context = browser.new_context(viewport=SCREEN, color_scheme=scheme)
    tab = context.new_page()
    tab.set_default_timeout(90_000)
    yield tab
    report_call = getattr(request.node, "report_call", None)
    if report_call is not None and report_call.failed:
        tab.screenshot(path=str(ARTIFACTS / f"FAILED-{request.node.name}.png"))
    context.close()


def assert_legible(tab, projector: bool, scheme: str, every_tab: bool = True) -> None:
    findings = legibility_findings(tab, projector, cut_off=scheme == "light", every_tab=every_tab)
    assert not findings, f"{len(findings)} findings:\n{report(findings)}"


@pytest.mark.browser
@pytest.mark.parametrize(("page", "scheme", "projector"), VIEWS)
def test_the_page_is_legible_and_accessible(screen, app_url, page, scheme, projector):
    screen.goto(f"{app_url}/{PAGES[page]}" + ("?present=1" if projector else ""))
    settle(screen)
    assert_legible(screen, projector, scheme)  # cut-off text only in light: a box cuts alike in both


@pytest.mark.browser
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_teacher_tasks_curves_are_legible_in_projector_mode(screen, app_url, scheme):
    screen.goto(f"{app_url}/forward_backward?present=1&input=teacher")
    settle(screen)
    screen.get_by_role("button", name="Train the student").click()
    screen.locator(".st-key-fb_teacher_chart .stPlotlyChart").wait_for()
    settle(screen)
    assert_legible(screen, projector=True, scheme=scheme, every_tab=False)  # the tabs: the views above


@pytest.mark.browser
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_mnists_probability_bars_are_legible_in_projector_mode(screen, app_url, scheme):
    screen.goto(f"{app_url}/mnist?present=1&epochs=1&bs=128&device=cpu")
    settle(screen)
    screen.get_by_role("button", name="Start").click()
    screen.get_by_test_id("stProgress").get_by_text(re.compile(r"\bdone\b")).wait_for()
    screen.get_by_role("tab", name="Try it").click()
    screen.locator(".st-key-mn_pick_bars .stPlotlyChart").wait_for()
    settle(screen)
    assert_legible(screen, projector=True, scheme=scheme, every_tab=False)  # the tabs: the views above


def a_room_with_results() -> str:
    """The instructor link of a room with a few results on two challenges, one of them closed."""
    from mlp.rooms import Instructor, Result, Rooms, Store

    clock = [1.0e9]
    rooms = Rooms(Store(), lambda: clock[0] + time.time() - 1.0e9)
    room, secret = rooms.create("Monday's class")
    for i, name in enumerate(["ana", "**ben**", "Chloé <b>", "dee"]):
        member = rooms.join(room.code, name)
        rooms.post(
            member, Result("moons-20", 0.99 + i / 400, 0.97 - i / 100, 10 + i, 114, "/playground?seed=1")
        )
        clock[0] += 2  # a member's writes are a second apart
        rooms.post(member, Result("spiral-sgd", 0.2 - i / 50, 0.3, 200, 33_000, "/playground?seed=2"))
    Instructor(rooms, room.code, secret).close_challenge("spiral-sgd")
    return f"board?room={room.code}#key={secret}"


@pytest.mark.browser
@pytest.mark.parametrize(
    ("scheme", "projector"),
    [("light", True), ("dark", False)],  # each scheme and each mode once
)
def test_the_class_board_with_results_is_legible(screen, app_url, scheme, projector):
    link = a_room_with_results().replace("#", "&present=1#" if projector else "#")
    screen.goto(f"{app_url}/{link}")
    settle(screen)
    screen.get_by_text("4 in · 4 met the goal").wait_for()  # moons-20's: all at 99% or more
    settle(screen)
    assert screen.get_by_test_id("stSidebar").get_by_text("Class room").count() == 0  # no join box here
    assert_legible(screen, projector, scheme)


PHONE = {"width": 390, "height": 844}


@pytest.mark.browser
@pytest.mark.parametrize("page", list(PAGES))
def test_every_page_reads_on_a_phone(browser, app_url, page):
    """390×844: the same checks, nothing cut off, on every page (its first screen: test_presenter)."""
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    tab = context.new_page()
    tab.set_default_timeout(90_000)
    try:
        tab.goto(f"{app_url}/{PAGES[page]}")
        settle(tab)
        findings = legibility_findings(tab, projector=False, cut_off=True, every_tab=True)
        if findings:
            tab.screenshot(path=str(ARTIFACTS / f"FAILED-phone-{page}.png"), full_page=True)
        assert not findings, f"{len(findings)} findings:\n{report(findings)}"
    finally:
        context.close()


@pytest.mark.browser
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_tour_stop_is_legible_in_projector_mode(screen, app_url, scheme):
    from urllib.parse import urlencode

    from mlp.curriculum.tour import HOW_AN_MLP_LEARNS

    screen.goto(f"{app_url}/playground?" + urlencode(HOW_AN_MLP_LEARNS.link(4) | {"present": "1"}))
    screen.locator(".st-key-tour_card").wait_for()
    settle(screen, title=False)
    assert_legible(screen, projector=True, scheme=scheme, every_tab=False)


# --- the checkers themselves, on a page made for them ---------------------------------------------

CUT = "A sentence far too long for the narrow box it is put in"
CHECKER_PAGE = f"""<body style="margin: 0; font: 16px sans-serif">
<div id="cut" style="width: 80px; overflow: hidden; white-space: nowrap">{CUT}</div>
<div id="dots" style="width: 80px; overflow: hidden; white-space: nowrap; text-overflow: ellipsis">{CUT}</div>
<div style="width: 500px; overflow: hidden; white-space: nowrap">It fits</div>
<pre style="width: 80px; overflow-x: auto">a_code_line_that_scrolls_on_purpose()</pre>
<span style="position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0)">{CUT}</span>
<div style="display: none"><div style="width: 80px; overflow: hidden">{CUT}</div></div>
<div style="visibility: hidden; width: 80px; overflow: hidden; white-space: nowrap">{CUT}</div>
<div style="position: absolute; left: -9999px; width: 80px; overflow: hidden; white-space: nowrap">{CUT}</div>
<button>Load…</button>
<p id="faint-page" style="color: #c8c8c8">faint on the page</p>
<div data-testid="stTabPanel"><p id="faint-tab" style="color: #c8c8c8">faint in a tab</p></div>
<div class="stPlotlyChart" style="width: 300px; height: 80px">
  <svg class="main-svg" width="300" height="80">
    <rect x="150" y="0" width="150" height="80" fill="#000000"></rect>
    <g class="xtick"><text x="10" y="30" style="font-size: 10px; fill: #808495">grey</text></g>
    <g class="ytick"><text x="10" y="60" style="font-size: 14px; fill: #1F2328">ink</text></g>
    <g class="heatmap-label"><text x="170" y="40" style="font-size: 14px; fill: #FFFFFF">cell</text></g>
  </svg>
</div></body>"""


@pytest.mark.browser
def test_the_checkers_find_what_is_wrong_and_nothing_else(browser):
    from tests.legibility import TAB_PANEL, axe_findings, chart_text_contrast, chart_text_sizes, cut_off_text

    context = browser.new_context(viewport=SCREEN)
    tab = context.new_page()
    try:
        tab.set_content(CHECKER_PAGE)
        cut = [(f.target, f.detail.split("'")[1]) for f in cut_off_text(tab)]
        assert cut == [("div", CUT), ("div", CUT), ("button", "Load…")], cut
        assert [f.target for f in chart_text_contrast(tab)] == ["chart 0 g.xtick text 'grey'"]
        assert "3.72:1" in chart_text_contrast(tab)[0].detail  # white text on the black cell passes
        assert [f.detail for f in chart_text_sizes(tab, 11)] == ["10.0 px < 11 px"]
        faint = [f.target for f in axe_findings(tab) if f.rule == "color-contrast"]
        assert faint == ["#faint-page", "#faint-tab"], faint  # the page's, and (below) a tab's alone
        inside = [f.target for f in axe_findings(tab, within=TAB_PANEL) if f.rule == "color-contrast"]
        assert inside == ["#faint-tab"], inside
    finally:
        context.close()
