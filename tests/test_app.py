"""The app shell: AppTest smoke tests, the library's independence, and the browser."""

import subprocess
import sys

import pytest
from streamlit.testing.v1 import AppTest

from tests.conftest import ARTIFACTS, ROOT, wait_for_app


def test_import_mlp_does_not_import_streamlit():
    code = "import sys, mlp, mlp.data, mlp.manual, mlp.model, mlp.train, mlp.plots, mlp.gradcheck; "
    code += "print('streamlit' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_home_page_renders_without_exceptions():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    assert not at.exception
    assert at.title[0].value == "MLP Playground"
    links = {link.proto.page: link.proto.label for link in at.get("page_link")}
    assert "Forward & backward" in links["forward_backward"]
    assert "2D playground" in links["playground"] and "MNIST" in links["mnist"]


def test_projector_mode_persists_across_pages():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    at.toggle(key="app_projector").set_value(True).run()
    assert not at.exception and at.session_state["app_projector"] is True
    at.switch_page("pages/forward_backward.py").run()
    assert at.sidebar.toggle(key="app_projector").value is True  # app.py's shell wraps every page


@pytest.mark.browser
def test_home_page_in_chromium(page, app_url):
    page.goto(app_url)
    wait_for_app(page, heading="MLP Playground")
    assert page.locator('[data-testid="stException"]').count() == 0
    page.screenshot(path=str(ARTIFACTS / "home.png"), full_page=True)
    page.get_by_test_id("stSidebar").get_by_text("Projector mode").click()
    wait_for_app(page)
    assert page.locator('[data-testid="stException"]').count() == 0
    size = page.evaluate("getComputedStyle(document.documentElement).fontSize")
    assert size == "20px"
    page.screenshot(path=str(ARTIFACTS / "home-projector.png"))


@pytest.mark.browser
def test_a_direct_link_on_a_fresh_server_gets_the_app_shell(browser, fresh_app):
    # The first request a server sees goes straight to a page, as a shared link would.
    tab = browser.new_page(viewport={"width": 1400, "height": 900})
    tab.set_default_timeout(90_000)
    tab.goto(f"{fresh_app}/forward_backward?from=link")
    wait_for_app(tab, heading="Forward & backward, step by step")
    sidebar = tab.get_by_test_id("stSidebar")
    assert sidebar.get_by_text("Projector mode").is_visible()
    assert sidebar.get_by_text("Forward & backward").is_visible()  # st.navigation's titles
    assert tab.url.endswith("/forward_backward?from=link")
    tab.close()
