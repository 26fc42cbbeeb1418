"""What every page shares, in one place. Not a page: Streamlit lists only pages/*.py files.

shell     the app shell (require_shell), a warm process (warm_up), the page-wide switches
          (debug captions, presenter mode) and page headers, waits that still hear clicks, the
          sidebar's training line
controls  sidebar widgets from a page's specs; settings that survive a page switch; the
          controls an instructor lets students see
text      a person's own text shown as text; errors and link notes; the one path for outside text
lessons   the lesson and challenge pickers, a challenge checked live, the link to copy
reconnect a visitor whose session the server lost is told so
pad       the digit drawing pad
plane     the 2D playground's plane and its numbers, drawn on a canvas
touch     what a click on the plane does: a point of the chosen class added, or points erased
internals everything taken from Streamlit beyond its public API, each with why and what breaks
tour      a guided tour's card: where the class is, what to say, → and ← to move, the outline
rooms     a student's class room: joining, the hidden part of its challenges, posting the best
cookies   the app's own cookies, HttpOnly, set through a route of the server's
"""

from pages.ui.controls import (
    control,
    controls,
    load_settings,
    number,
    page_settings,
    shown_controls,
    slider,
    stops,
)
from pages.ui.lessons import challenge_picker, challenge_status, lesson_panel, page_url, share_link
from pages.ui.pad import digit_pad
from pages.ui.plane import plane
from pages.ui.rooms import room_seed
from pages.ui.shell import (
    chart,
    collection_text,
    debug_mode,
    link_query,
    page_header,
    presenter,
    presenter_toggle,
    presenting,
    require_shell,
    settings_query,
    switches_query,
    training_status,
    wait_heeding_clicks,
    warm_up,
)
from pages.ui.text import literal, plain, say, show_link_notes

__all__ = [
    "challenge_picker",
    "challenge_status",
    "chart",
    "collection_text",
    "control",
    "controls",
    "debug_mode",
    "digit_pad",
    "lesson_panel",
    "link_query",
    "literal",
    "load_settings",
    "number",
    "page_header",
    "page_settings",
    "page_url",
    "plain",
    "plane",
    "presenter",
    "presenter_toggle",
    "presenting",
    "require_shell",
    "room_seed",
    "say",
    "settings_query",
    "share_link",
    "show_link_notes",
    "shown_controls",
    "slider",
    "stops",
    "switches_query",
    "training_status",
    "wait_heeding_clicks",
    "warm_up",
]
