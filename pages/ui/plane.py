"""The 2D playground's plane on a canvas: the shaded boundary, the points, the axes.

A custom component (components v2) draws what mlp.figures.plane.plane_view describes. The
points become an offscreen layer drawn once per data set; a frame only swaps the small
boundary image, so the browser keeps up with the frames TensorFlow Playground-style.
"""

import streamlit as st

_HTML = """
<div class="plane">
  <canvas role="img" aria-label="The decision boundary over the plane, with the data points"></canvas>
  <div class="legend"></div>
</div>
"""
_CSS = """
.plane { width: 100%; max-width: min(34rem, 52vh); font-size: 0.8rem; color: var(--st-text-color, inherit); }
canvas { width: 100%; aspect-ratio: 1 / 1; display: block; }
.legend { display: flex; flex-wrap: wrap; gap: 0.35rem 1rem; margin-top: 0.25rem; opacity: 0.85; }
.legend span { display: inline-flex; align-items: center; gap: 0.3rem; }
.dot { width: 0.7rem; height: 0.7rem; border-radius: 50%; display: inline-block; box-sizing: border-box; }
"""
_JS = """
export default function (component) {
  const { data, parentElement } = component;
  const root = parentElement.querySelector(".plane");
  const canvas = root.querySelector("canvas");
  const s = root.__plane || (root.__plane = { image: new Image(), key: null, layer: null });
  s.data = data;

  const layout = (size, dpr) => {
    const em = parseFloat(getComputedStyle(root).fontSize) * dpr;  // follows projector mode
    const left = 2.6 * em, bottom = 2.4 * em, top = 0.4 * em, right = 0.4 * em;
    return { em, x: left, y: top, w: size - left - right, h: size - top - bottom };
  };
  const toPx = (d, box, x, y) => {
    const [x0, x1, y0, y1] = d.extent;
    return [box.x + ((x - x0) / (x1 - x0)) * box.w, box.y + ((y1 - y) / (y1 - y0)) * box.h];
  };
  const pointsLayer = (d, size, box, dpr) => {
    const layer = document.createElement("canvas");
    layer.width = layer.height = size;
    const g = layer.getContext("2d");
    const r = 0.32 * box.em;
    const ring = (x, y, colour, width) => {
      g.beginPath(); g.arc(x, y, r, 0, 2 * Math.PI); g.lineWidth = width; g.strokeStyle = colour; g.stroke();
    };
    for (const [x, y, c] of d.train) {
      const [px, py] = toPx(d, box, x, y);
      g.beginPath(); g.arc(px, py, r, 0, 2 * Math.PI); g.fillStyle = d.colors[c]; g.fill();
      ring(px, py, "rgba(255,255,255,0.9)", dpr);
    }
    for (const [x, y, c] of d.test) {
      const [px, py] = toPx(d, box, x, y);
      ring(px, py, "rgba(255,255,255,0.9)", 3.5 * dpr);
      ring(px, py, d.colors[c], 2 * dpr);
    }
    return layer;
  };
  const draw = () => {
    const d = s.data;
    const dpr = window.devicePixelRatio || 1;
    const size = Math.max(1, Math.round(canvas.clientWidth * dpr));
    if (canvas.width !== size) { canvas.width = canvas.height = size; s.key = null; }
    const box = layout(size, dpr);
    const key = [size, d.extent, d.train.length, d.test.length, d.train[0], d.test[0]].join("|");
    if (s.key !== key) { s.layer = pointsLayer(d, size, box, dpr); s.key = key; }
    const g = canvas.getContext("2d");
    g.clearRect(0, 0, size, size);
    g.imageSmoothingEnabled = true;
    g.drawImage(s.image, box.x, box.y, box.w, box.h);
    g.drawImage(s.layer, 0, 0);
    const ink = getComputedStyle(root).color;
    g.strokeStyle = ink; g.globalAlpha = 0.5; g.lineWidth = dpr;
    g.strokeRect(box.x, box.y, box.w, box.h);
    g.globalAlpha = 1; g.fillStyle = ink;
    g.font = `${box.em}px sans-serif`;
    g.textAlign = "center"; g.textBaseline = "top";
    for (const t of d.xticks) g.fillText(String(t), toPx(d, box, t, 0)[0], box.y + box.h + 0.3 * box.em);
    g.fillText("x1", box.x + box.w / 2, box.y + box.h + 1.3 * box.em);
    g.textAlign = "right"; g.textBaseline = "middle";
    for (const t of d.yticks) g.fillText(String(t), box.x - 0.35 * box.em, toPx(d, box, 0, t)[1]);
    g.save(); g.translate(0.6 * box.em, box.y + box.h / 2); g.rotate(-Math.PI / 2);
    g.textAlign = "center"; g.fillText("x2", 0, 0); g.restore();
    canvas.dataset.step = String(d.step);
  };

  s.image.onload = draw;
  s.image.src = data.image;
  if (!s.observer) {
    s.observer = new ResizeObserver(() => s.image.complete && draw());
    s.observer.observe(canvas);
  }
  const dot = (colour, hollow) =>
    `<i class="dot" style="${hollow ? `border: 2px solid ${colour}` : `background: ${colour}`}"></i>`;
  root.querySelector(".legend").innerHTML =
    data.colors.map((c, i) => `<span>${dot(c, false)}class ${i}</span>`).join("") +
    `<span>${dot("currentColor", false)}train</span>` +
    (data.test.length ? `<span>${dot("currentColor", true)}test</span>` : "");
}
"""

_component = None


def plane(view: dict, step: int, key: str) -> None:
    """Draw mlp.figures.plane.plane_view's data; `step` marks the frame (tests wait on it)."""
    global _component
    if _component is None:  # registered once per process
        _component = st.components.v2.component("mlp_plane", html=_HTML, css=_CSS, js=_JS)
    _component(key=key, data={**view, "step": step})
