"""What every page shares: the app shell, text shown as text, link notes, the drawing pad.

Streamlit never lists __init__.py as a page.
"""

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import streamlit as st

# Private, and the one place it is used: Streamlit 1.61+ has no public switch for this.
# tests/test_app.py fails loudly if an upgrade renames it or stops reading it.
from streamlit.runtime.pages_manager import PagesManager

from mlp.errors import InputError
from mlp.lessons.settings import LinkNote, Spec, widget_values

MAX_NOTES = 5  # link notes shown one by one; the rest are counted


def require_shell() -> None:
    """Run this page inside app.py's navigation, even when it is the first URL a server sees.

    A folder named pages/ makes Streamlit start in its old directory mode: until some run
    calls st.navigation, a direct link to a page runs that file alone, without app.py's page
    config and sidebar. Leaving that mode and rerunning sends the request through app.py,
    on the same page and with the same query string.
    """
    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False
        st.rerun()


def page_settings(
    prefix: str, specs: Mapping[str, Spec], first: Callable[[], tuple[Any, list[LinkNote]]]
) -> tuple[Any, list[LinkNote]]:
    """A page's saved settings, and its sidebar's widgets filled from them where they are missing.

    Streamlit forgets a widget's value when its page is not shown, so the settings live under
    `prefix + "settings"` and refill the widgets on the way back. On a visitor's first view
    `first()` gives them (from the link, or the defaults) with notes on what the link got wrong.
    """
    key, notes = prefix + "settings", []
    if key not in st.session_state:
        st.session_state[key], notes = first()
    for name, value in widget_values(st.session_state[key], prefix, specs).items():
        st.session_state.setdefault(name, value)
    return st.session_state[key], notes


def load_settings(prefix: str, specs: Mapping[str, Spec], settings: Any) -> None:
    """Settings (a preset, a loaded link) into the page's saved settings and its widgets."""
    st.session_state[prefix + "settings"] = settings
    st.session_state.update(widget_values(settings, prefix, specs))


def literal(text: str, limit: int = 60) -> str:
    """Untrusted text (a link's, a file name) as Markdown that shows it verbatim: a code span.

    Inside a code span Markdown draws no link, image or HTML, and makes no autolink of a bare
    address; the text is cut at `limit` characters and kept to one line.
    """
    text = " ".join(str(text).split())
    text = text if len(text) <= limit else text[: limit - 1] + "…"
    fence = "`" * (max((len(run) for run in re.findall("`+", text)), default=0) + 1)
    return f"{fence} {text} {fence}"


def say(error: BaseException) -> str:
    """An error's sentence as Markdown, with the person's own text in it shown as literal text."""
    if isinstance(error, InputError):
        return error.template.format(*(literal(q) for q in error.quoted))
    return str(error)


def stops(label: str, spec: Spec, key: str, fmt: Callable = lambda v: f"{v:g}", **kwargs) -> Any:
    """A select-slider over the spec's stops (and a linked value between them)."""
    return st.select_slider(label, spec.options(st.session_state[key]), key=key, format_func=fmt, **kwargs)


def slider(label: str, spec: Spec, key: str, **kwargs) -> Any:
    """A slider over the spec's range and step."""
    return st.slider(label, spec.low, spec.high, step=spec.step, key=key, **kwargs)


def number(label: str, spec: Spec, key: str, **kwargs) -> Any:
    """A number input over the spec's range and step."""
    return st.number_input(label, spec.low, spec.high, step=spec.step, key=key, **kwargs)


def show_link_notes(notes: Sequence[LinkNote]) -> None:
    """What a link carried that the page could not use, each value shown as plain text."""
    for note in notes[:MAX_NOTES]:
        st.warning(
            f"Ignored {literal(note.key + '=' + note.value)}: {note.reason}.", icon=":material/link_off:"
        )
    if len(notes) > MAX_NOTES:
        st.warning(
            f"…and {len(notes) - MAX_NOTES} more link parameters, ignored.", icon=":material/link_off:"
        )


_PAD_SIDE = 56  # the pad sends its ink at 56 × 56; mlp.digits makes a 28 × 28 digit of it

_PAD_HTML = """
<div class="pad">
  <canvas width="280" height="280" aria-label="Drawing pad: draw a digit"></canvas>
  <div class="row"><button type="button" class="clear">Clear</button><span>Draw a digit, 0 to 9</span></div>
</div>
"""
_PAD_CSS = """
.pad { display: inline-flex; flex-direction: column; gap: 0.4rem; }
canvas { width: 220px; height: 220px; background: #000; border-radius: 0.5rem; cursor: crosshair;
         touch-action: none; border: 1px solid rgba(128, 128, 128, 0.5); }
.row { display: flex; gap: 0.75rem; align-items: center; font-size: 0.85rem; opacity: 0.8; }
button { font: inherit; padding: 0.2rem 0.8rem; border-radius: 0.4rem; cursor: pointer;
         border: 1px solid rgba(128, 128, 128, 0.6); background: transparent; color: inherit; }
"""
_PAD_JS = """
export default function (component) {
  const { parentElement, setStateValue } = component;
  const canvas = parentElement.querySelector("canvas");
  if (canvas.dataset.ready) return;  // already wired: keep the drawing across reruns
  canvas.dataset.ready = "1";
  const ctx = canvas.getContext("2d");
  const blank = () => { ctx.fillStyle = "#000"; ctx.fillRect(0, 0, 280, 280); };
  blank();
  Object.assign(ctx, { lineWidth: 22, lineCap: "round", lineJoin: "round", strokeStyle: "#fff" });
  let last = null;
  const at = (e) => {
    const r = canvas.getBoundingClientRect();
    return [((e.clientX - r.left) * 280) / r.width, ((e.clientY - r.top) * 280) / r.height];
  };
  const line = (a, b) => { ctx.beginPath(); ctx.moveTo(...a); ctx.lineTo(...b); ctx.stroke(); };
  canvas.onpointerdown = (e) => { last = at(e); canvas.setPointerCapture(e.pointerId); line(last, last); };
  canvas.onpointermove = (e) => { if (last) { const p = at(e); line(last, p); last = p; } };
  canvas.onpointerup = () => {
    last = null;
    const small = document.createElement("canvas");
    small.width = small.height = SIDE;
    const s = small.getContext("2d");
    s.drawImage(canvas, 0, 0, SIDE, SIDE);
    const rgba = s.getImageData(0, 0, SIDE, SIDE).data;
    let text = "";
    for (let i = 0; i < SIDE * SIDE; i++) text += String.fromCharCode(rgba[4 * i]);
    setStateValue("pixels", btoa(text));
  };
  parentElement.querySelector(".clear").onclick = () => { blank(); setStateValue("pixels", ""); };
}
""".replace("SIDE", str(_PAD_SIDE))

_pad = None


def digit_pad(key: str) -> tuple[bytes | None, int]:
    """A drawing pad: the ink the user drew (side × side bytes, 255 = ink) or None, and the side."""
    import base64

    global _pad
    if _pad is None:  # registered once per process
        _pad = st.components.v2.component("mlp_digit_pad", html=_PAD_HTML, css=_PAD_CSS, js=_PAD_JS)
    result = _pad(key=key, on_pixels_change=lambda: None)
    pixels = getattr(result, "pixels", None)
    return (base64.b64decode(pixels) if pixels else None), _PAD_SIDE
