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
    text = " ".join(m.value for m in at.markdown)
    assert "Forward & backward" in text and "2D playground" in text and "MNIST" in text


def test_sidebar_offers_projector_mode():
    # AppTest drops elements app.py draws on reruns of a page (not in a browser), so the
    # toggle's effect is checked in the Chromium test below; here, that it is offered.
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    toggle = at.sidebar.toggle[0]
    assert toggle.key == "app_projector" and toggle.label == "Projector mode" and toggle.value is False


@pytest.mark.browser
def test_home_page_in_chromium(page, app_url):
    page.goto(app_url)
    wait_for_app(page)
    assert page.get_by_role("heading", name="MLP Playground").is_visible()
    assert page.locator('[data-testid="stException"]').count() == 0
    page.screenshot(path=str(ARTIFACTS / "home.png"), full_page=True)
    page.get_by_test_id("stSidebar").get_by_text("Projector mode").click()
    wait_for_app(page)
    assert page.locator('[data-testid="stException"]').count() == 0
    size = page.evaluate("getComputedStyle(document.documentElement).fontSize")
    assert size == "20px"
    page.screenshot(path=str(ARTIFACTS / "home-projector.png"))
