"""A person's own text (a link's value, a file name) is shown as they wrote it: icon shortcodes too.

Streamlit's frontend rewrites every ":material/" in Markdown to ":material_" before parsing it,
code spans included (that is how it draws :material/icon: shortcodes), so a link value of
":material/warning:" showed as ":material_warning:". pages/ui/text.py's `literal()` and
`plain()` break the sequence with a zero-width space.
"""

import pytest

from pages.ui.text import literal
from tests.conftest import open_page, wait_for_app

ZWSP = "\u200b"  # what Streamlit puts in ":material/" to show one in its own messages
SHORTCODE = ":material/warning:"


def test_an_icon_shortcode_in_a_person_s_text_stays_text():
    shown = literal(f"lr={SHORTCODE}")
    assert ":material/" not in shown  # what the frontend would rewrite
    assert shown.replace(ZWSP, "") == f"` lr={SHORTCODE} `"  # and nothing else changes


def test_a_link_note_names_the_shortcode_the_link_carried():
    app = open_page("pages/playground.py", {"lr": SHORTCODE})
    (note,) = [w.value for w in app.warning if "lr=" in w.value]
    assert ":material/" not in note and f"` lr={SHORTCODE} `" in note.replace(ZWSP, "")


@pytest.mark.browser
def test_the_browser_shows_the_shortcode_as_it_was_written(page, app_url):
    page.goto(f"{app_url}/playground?lr={SHORTCODE}")
    wait_for_app(page, heading="2D playground")
    note = page.get_by_test_id("stAlert").filter(has_text="lr=").first.inner_text()
    assert f"lr={SHORTCODE}" in note.replace(ZWSP, "") and "material_" not in note
