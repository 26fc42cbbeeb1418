"""Every page's link, opened in a fresh browser (a new context: no session, no cookies), gives
the same setup: the same settings, the same tab and step, the same numbers."""

import re

import pytest
from playwright.sync_api import expect

from tests.conftest import wait_for_app
from tests.harness import button, plane_metric, plane_metrics


def copied_link(page) -> str:
    """The link the page offers to copy (the sidebar's "Link to this setup")."""
    sidebar = page.get_by_test_id("stSidebar")
    sidebar.get_by_text("Link to this setup").click()
    code = sidebar.get_by_test_id("stCode").last
    code.wait_for()
    return code.inner_text().strip()


def fresh_tab(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    tab = context.new_page()
    tab.set_default_timeout(90_000)
    return context, tab


def press(page, name: str, times: int) -> None:
    for _ in range(times):
        button(page, name).click()
        wait_for_app(page)


@pytest.mark.browser
def test_the_playground_link_reproduces_the_run_step_for_step(page, app_url, browser):
    page.goto(f"{app_url}/playground?lesson=overfitting")
    wait_for_app(page, heading="2D playground")
    page.get_by_test_id("stSidebar").get_by_label("Seed (initial weights, batch order)").fill("4")
    page.keyboard.press("Enter")
    wait_for_app(page)
    press(page, "Step", 3)
    expect(plane_metric(page, "Step")).to_have_text("3")
    link, there = copied_link(page), plane_metrics(page)
    assert link == page.url and "seed=4" in link and "lesson=overfitting" in link
    context, tab = fresh_tab(browser)
    tab.goto(link)
    wait_for_app(tab, heading="2D playground")
    tab.get_by_text("Over-fitting, and weight decay.").wait_for()  # the lesson's box
    press(tab, "Step", 3)
    expect(plane_metric(tab, "Step")).to_have_text("3")
    assert plane_metrics(tab) == there  # epoch, step, train and test loss, test accuracy
    assert tab.locator('[data-testid="stException"]').count() == 0
    context.close()


@pytest.mark.browser
def test_the_forward_page_link_reopens_the_same_step_of_the_same_network(page, app_url, browser):
    page.goto(f"{app_url}/forward_backward?hidden=6-4&seed=3&act=tanh")
    wait_for_app(page, heading="Forward & backward, step by step")
    press(page, "Next ▶", 4)
    title = page.get_by_role("heading", name=re.compile(r"^Step 5 of ")).inner_text()
    link = copied_link(page)
    assert link == page.url and "step=z3" in link and "hidden=6-4" in link
    context, tab = fresh_tab(browser)
    tab.goto(link)
    wait_for_app(tab, heading="Forward & backward, step by step")
    assert tab.get_by_role("heading", name=re.compile(r"^Step 5 of ")).inner_text() == title
    expect(tab.get_by_test_id("stSidebar").get_by_role("textbox", name="Hidden widths")).to_have_value("6, 4")
    tab.get_by_role("tab", name="Gradient check").click()
    wait_for_app(tab)
    tab.wait_for_url(re.compile(r"tab=gradients"))
    context.close()
    context, again = fresh_tab(browser)
    again.goto(tab.url)
    wait_for_app(again, heading="Forward & backward, step by step")
    selected = again.get_by_role("tab", selected=True)
    assert selected.inner_text() == "Gradient check"
    context.close()


@pytest.mark.browser
def test_the_mnist_link_refills_the_sidebar(page, app_url, browser):
    page.goto(f"{app_url}/mnist")
    wait_for_app(page, heading="MNIST")
    hidden = page.get_by_test_id("stSidebar").get_by_role("textbox", name="Hidden widths")
    hidden.fill("64, 32")
    hidden.press("Enter")
    wait_for_app(page)
    page.wait_for_url(re.compile(r"hidden=64-32"))
    link = copied_link(page)
    assert link == page.url
    context, tab = fresh_tab(browser)
    tab.goto(link)
    wait_for_app(tab, heading="MNIST")
    expect(tab.get_by_test_id("stSidebar").get_by_role("textbox", name="Hidden widths")).to_have_value(
        "64, 32"
    )
    context.close()
