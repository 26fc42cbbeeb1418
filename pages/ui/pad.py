"""A drawing pad for digits: a custom component (components v2) that sends its ink to Python."""

import base64

import streamlit as st

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
    global _pad
    if _pad is None:  # registered once per process
        _pad = st.components.v2.component("mlp_digit_pad", html=_PAD_HTML, css=_PAD_CSS, js=_PAD_JS)
    result = _pad(key=key, on_pixels_change=lambda: None)
    pixels = getattr(result, "pixels", None)
    return (base64.b64decode(pixels) if pixels else None), _PAD_SIDE
