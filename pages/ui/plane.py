"""The 2D playground's plane on a canvas: the numbers, the shaded boundary, the points, the axes.

A custom component (components v2). The points become an offscreen layer drawn once per data
set; a frame only swaps the small boundary image and the numbers. The page's script hands it
the frame of the moment; while the visitor plays, the component fetches every next frame itself
from pages/ui/frames.py's route, one after the other, and asks the page to rerun only when the
run ends or the page must say something new (a diverged or dying run).
"""

from collections.abc import Callable
from typing import Any

import streamlit as st

from pages.ui.frames import TOKEN_HEADER, Stream, frame_path
from pages.ui.live import visitor

_HTML = """
<div class="plane">
  <div class="metrics" role="group" aria-label="The run's numbers"></div>
  <div class="note" role="status"></div>
  <div class="view" role="status"></div>
  <canvas role="img" aria-label="The decision boundary over the plane, with the data points"></canvas>
  <div class="legend"></div>
  <div class="rate"></div>
</div>
"""
_CSS = """
.plane { width: 100%; font-size: 0.8rem; color: var(--st-text-color, inherit); container-type: inline-size; }
/* A frame changes the numbers' text and the canvas: the page around them is neither laid out again
   nor repainted for it. */
.plane { contain: layout style paint; }
/* A number has its own size: a new one lays out nothing else (and a wide one is not cut off). */
.metric .value { contain: size layout style; height: 1.25em; }
.metrics { display: grid; grid-template-columns: repeat(5, minmax(0, 1fr)); gap: 0.5rem 1rem; }
.metrics { margin-bottom: 0.75rem; align-items: end; }
.metric .label { font-size: 0.875rem; line-height: 1.3; opacity: 0.85; }  /* long ones wrap */
.metric .value { font-size: 1.75rem; line-height: 1.25; white-space: nowrap;
  font-variant-numeric: tabular-nums; }
.presenter .metric .label { font-size: 0.9rem; line-height: 1.2; white-space: normal; }
.presenter .metric .value { font-size: 1.4rem; }
@container (max-width: 380px) {  /* a phone: five numbers in a row would be cut ("Test accura") */
  .metrics { grid-template-columns: repeat(3, minmax(0, 1fr)); }
  .metric .value { font-size: 1.35rem; }  /* "0.0154" in a third of a phone's width */
}
canvas { width: 100%; max-width: min(34rem, 52vh); aspect-ratio: 1 / 1; display: block; }
.legend { display: flex; flex-wrap: wrap; gap: 0.35rem 1rem; margin-top: 0.25rem; opacity: 0.85; }
.legend span, .chip { display: inline-flex; align-items: center; gap: 0.3rem; }
.chip { font: inherit; color: inherit; background: none; cursor: pointer; margin: 0;
  border: 1px solid rgba(128, 128, 128, 0.5); border-radius: 1rem; padding: 0 0.45rem; }
.chip[aria-pressed="true"] { border: 2px solid currentColor; padding: 0 calc(0.45rem - 1px);
  background: rgba(128, 128, 128, 0.18); font-weight: 600; }
.dot { width: 0.7rem; height: 0.7rem; border-radius: 50%; display: inline-block; box-sizing: border-box; }
.scale { display: inline-flex; align-items: center; gap: 0.4rem; }
.scale .bar { width: 8rem; height: 0.7rem; border-radius: 0.2rem; display: inline-block; }
.rate { opacity: 0.7; margin-top: 0.25rem; }
.note { margin: -0.4rem 0 0.4rem; max-width: min(34rem, 52vh); opacity: 0.85; }
.view { margin: -0.4rem 0 0.4rem; max-width: min(34rem, 52vh); font-weight: 600; }
.rate:empty, .note:empty, .view:empty { display: none; }
"""
_JS = """
export default function (component) {
  const { data, parentElement, setTriggerValue } = component;
  const root = parentElement.querySelector(".plane");
  const canvas = root.querySelector("canvas");
  const s = root.__plane || (root.__plane = { image: new Image(), key: null, seq: 0, loop: false });
  s.data = data;
  s.trigger = setTriggerValue;
  s.told = null;  // the page has just run: it knows what the server knew then
  // Which points the cached layer shows: clicks add and erase them, so every one counts.
  s.pointsKey = JSON.stringify([data.points.extent, data.points.train, data.points.test, data.points.colors]);
  root.classList.toggle("presenter", !!data.presenter);

  // What a frame's drawing reads of the page (the canvas's width, the font size, the ink) is read
  // once per run of the page, per resize and every 40th frame (a theme switched in the browser),
  // not every frame: read after the numbers' text changed, it would make the browser lay out
  // the whole page again.
  const style = () => s.style || (s.style = getComputedStyle(root));
  const fontPx = () => s.fontPx || (s.fontPx = parseFloat(style().fontSize));  // follows projector mode
  const ink = () => s.ink || (s.ink = style().color);
  s.style = s.fontPx = s.ink = null;
  const layout = (size, dpr) => {
    const em = fontPx() * dpr;
    const left = 2.6 * em, bottom = 2.4 * em, top = 0.4 * em, right = 0.4 * em;
    return { em, x: left, y: top, w: size - left - right, h: size - top - bottom };
  };
  const toPx = (d, box, x, y) => {
    const [x0, x1, y0, y1] = d.extent;
    return [box.x + ((x - x0) / (x1 - x0)) * box.w, box.y + ((y1 - y) / (y1 - y0)) * box.h];
  };
  // Everything but the boundary is drawn once per data set, size and ink, into a layer of its
  // own: a frame draws two images, with no text (setting a font makes the browser resolve styles).
  const staticLayer = (d, size, box, dpr, color) => {
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
    g.strokeStyle = color; g.globalAlpha = 0.5; g.lineWidth = dpr;
    g.strokeRect(box.x, box.y, box.w, box.h);
    g.globalAlpha = 1; g.fillStyle = color;
    g.font = `${box.em}px sans-serif`;
    g.textAlign = "center"; g.textBaseline = "top";
    for (const t of d.xticks) g.fillText(String(t), toPx(d, box, t, 0)[0], box.y + box.h + 0.3 * box.em);
    g.fillText("x1", box.x + box.w / 2, box.y + box.h + 1.3 * box.em);
    g.textAlign = "right"; g.textBaseline = "middle";
    for (const t of d.yticks) g.fillText(String(t), box.x - 0.35 * box.em, toPx(d, box, 0, t)[1]);
    g.save(); g.translate(0.6 * box.em, box.y + box.h / 2); g.rotate(-Math.PI / 2);
    g.textAlign = "center"; g.fillText("x2", 0, 0); g.restore();
    return layer;
  };
  const draw = () => {
    s.drawn = (s.drawn || 0) + 1;
    if (s.drawn % 40 === 0) s.style = s.fontPx = s.ink = null;
    const d = s.data.points;
    const dpr = window.devicePixelRatio || 1;
    if (s.width === undefined) s.width = canvas.clientWidth;  // then kept by the ResizeObserver
    const size = Math.max(1, Math.round(s.width * dpr));
    if (canvas.width !== size) { canvas.width = canvas.height = size; s.key = null; }
    const box = layout(size, dpr), color = ink();
    const key = `${size}|${box.em}|${color}|${s.pointsKey}`;
    if (s.key !== key) { s.layer = staticLayer(d, size, box, dpr, color); s.key = key; }
    const g = canvas.getContext("2d");
    g.clearRect(0, 0, size, size);
    g.imageSmoothingEnabled = true;
    g.drawImage(s.image, box.x, box.y, box.w, box.h);
    g.drawImage(s.layer, 0, 0);
    if (s.data.probe) {  // the point whose computation the page shows
      const [px, py] = toPx(d, box, s.data.probe[0], s.data.probe[1]), r = 0.45 * box.em;
      g.lineWidth = 2 * dpr; g.strokeStyle = color;
      g.beginPath(); g.moveTo(px - r, py); g.lineTo(px + r, py); g.moveTo(px, py - r); g.lineTo(px, py + r);
      g.stroke();
    }
    canvas.dataset.step = String(s.frame.step);
    const discrete = String(!!s.frame.discrete), extent = d.extent.join(" ");
    if (canvas.dataset.discrete !== discrete) canvas.dataset.discrete = discrete;
    if (canvas.dataset.extent !== extent) canvas.dataset.extent = extent;  // for tests that click a point
  };

  // The numbers: built once, then only their text changes.
  const metrics = root.querySelector(".metrics");
  const showMetrics = (pairs) => {
    const labels = pairs.map(([label]) => label).join("|");
    if (metrics.dataset.labels !== labels) {  // another task's numbers (a regression's MSE and R²)
      metrics.dataset.labels = labels;
      metrics.innerHTML = "";
      for (const [label] of pairs) {
        const m = document.createElement("div");
        m.className = "metric"; m.dataset.label = label;
        m.innerHTML = '<div class="label"></div><div class="value"></div>';
        m.firstChild.textContent = label;
        metrics.appendChild(m);
      }
    }
    pairs.forEach(([, value], i) => {
      const cell = metrics.children[i].lastChild;
      if (cell.textContent !== value) cell.textContent = value;  // an unchanged number costs no layout
    });
  };

  // A frame's words (its numbers, what the plane shows, the server's note) and its picture change
  // in one task, once its image is decoded: one style, layout and paint of the page a frame, not two.
  const words = (frame) => {
    showMetrics(frame.metrics);
    const view = root.querySelector(".view"), note = root.querySelector(".note");
    if (view.textContent !== (frame.view || "")) view.textContent = frame.view || "";  // a unit on the plane
    if (canvas.dataset.focus !== (frame.focus || "")) canvas.dataset.focus = frame.focus || "";
    s.label = s.label || canvas.getAttribute("aria-label");  // the boundary's, from the HTML
    if (canvas.getAttribute("aria-label") !== (frame.view || s.label)) {
      canvas.setAttribute("aria-label", frame.view || s.label);
    }
    if (note.textContent !== (frame.note || "")) note.textContent = frame.note || "";  // on capped steps
    s.times = (s.times || []).filter((t) => t > performance.now() - 3000).concat(performance.now());
    if (s.data.debug && s.times.length > 1) {
      const fps = (s.times.length - 1) / ((s.times[s.times.length - 1] - s.times[0]) / 1000);
      root.querySelector(".rate").textContent =
        `${fps.toFixed(1)} frames/s, ${frame.build_ms.toFixed(0)} ms to build one (server)`;
    }
  };
  const render = () => {
    if (s.unsaid) { words(s.unsaid); s.unsaid = null; }
    if (s.image.complete && s.image.naturalWidth) draw();
  };

  // A frame newer than the one on screen replaces it (true); it shows once its image is decoded.
  const show = (frame) => {
    if (s.stream === s.data.stream && frame.seq <= s.seq) return false;
    s.stream = s.data.stream; s.seq = frame.seq; s.frame = frame; s.unsaid = frame;
    if (s.image.src === frame.image && s.image.complete) render();  // the same image: no load event
    else s.image.src = frame.image;
    return true;
  };

  // Ask the page to rerun: once for each new thing it must hear between two of its runs.
  const tell = (said, seq) => {
    if (said === s.told) return;
    s.told = said;
    s.trigger("ended", seq);
  };

  // One frame from the server: [status, body or null]. Over the page's WebSocket to the frame
  // route, one message a frame (a request over HTTP costs the browser ~8 ms more), open while
  // the plane plays; over HTTP if no socket of this tab ever opened (a proxy that won't upgrade
  // this path; a server restarting later only means trying again). No answer in 30 s: an error.
  const overHttp = async (d) => {
    const r = await fetch(d.path, {
      cache: "no-store", headers: { [d.header]: d.stream }, signal: AbortSignal.timeout(30000),
    });
    return [r.status, [200, 410, 500].includes(r.status) ? await r.json() : null];
  };
  const ask = (d) => {
    if (s.http) return overHttp(d);
    let ws = s.ws;
    if (!ws || ws.readyState > WebSocket.OPEN) {
      const url = new URL(d.path, location.href);
      url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
      ws = s.ws = new WebSocket(url);
    }
    return new Promise((resolve, reject) => {
      const end = (error, answer) => {
        clearTimeout(timer);
        ws.onopen = ws.onmessage = ws.onclose = null;
        if (answer) return resolve(answer);
        if (!s.opened) s.http = true;  // no socket of this tab ever opened: HTTP from now on
        ws.close();
        reject(error);
      };
      const timer = setTimeout(() => end(new Error("no answer in 30 s")), 30000);
      ws.onmessage = (e) => {
        try {
          const { status, ...f } = JSON.parse(e.data);
          end(null, [status, f]);
        } catch (error) {
          end(error);
        }
      };
      ws.onclose = () => end(new Error("the socket closed"));
      // The token, and the key the page's last run gave: the first socket to send a key holds the
      // stream (its frames keep the page's lease; pages/ui/frames.py)
      const send = () => { s.opened = true; ws.send(d.key ? `${d.stream} ${d.key}` : d.stream); };
      if (ws.readyState === WebSocket.OPEN) send(); else ws.onopen = send;
    });
  };

  // While playing: ask for the next frame once this one is drawn, at most every `interval` s.
  // The page reruns only when the run ends, its banner must change, or the server stopped it.
  const play = async () => {
    if (s.loop) return;
    s.loop = true;
    try {
      while (root.isConnected && s.data.playing) {
        const d = s.data, started = performance.now();
        let rest = d.interval * 1000;
        try {
          const [status, f] = await ask(d);
          if (d.stream !== s.data.stream) continue;  // an answer for a session the page has left
          if (status === 410) {  // this server has no such session: a rerun reconnects the page
            if (!s.gone) { s.gone = true; s.trigger("ended", -1); }
            break;
          }
          if (f && f.interval) rest = f.interval * 1000;  // the server's pace as of this frame
          if (f && f.seq !== undefined) {
            const said = `${f.finished}|${f.banner}`;
            if (show(f) && said !== `${s.data.frame.finished}|${s.data.frame.banner}`) tell(said, f.seq);
          } else if (f && f.playing === false) {
            tell("stopped", s.seq);  // a Pause, the run's end or a failure: the page must show it
            rest = 500;
          } else {
            rest = 1000;  // busy, or an error on the way: try again
          }
        } catch (e) {
          rest = 1000;  // the network, or no answer in 30 s: try again
        }
        await new Promise((done) => setTimeout(done, Math.max(0, rest - (performance.now() - started))));
      }
    } finally {
      s.loop = false;
      if (s.ws) s.ws.close();  // paused, finished or gone: the next Play opens another
      s.ws = null;
    }
  };

  // A click inside the axes: its point in the plane's own coordinates, for the page to act on.
  if (!s.clicks) {
    s.clicks = true;
    canvas.addEventListener("click", (e) => {
      const d = s.data.points, dpr = window.devicePixelRatio || 1;
      const box = layout(Math.round(s.width * dpr), dpr);
      const rect = canvas.getBoundingClientRect();
      const px = (e.clientX - rect.left) * dpr, py = (e.clientY - rect.top) * dpr;
      if (px < box.x || px > box.x + box.w || py < box.y || py > box.y + box.h) return;
      const [x0, x1, y0, y1] = d.extent;
      const x = x0 + ((px - box.x) / box.w) * (x1 - x0), y = y1 - ((py - box.y) / box.h) * (y1 - y0);
      s.clicked = (s.clicked || 0) + 1;  // two clicks on one spot are two clicks
      s.trigger("click", { x: Math.round(x * 1e4) / 1e4, y: Math.round(y * 1e4) / 1e4, n: s.clicked });
    });
  }
  canvas.style.cursor = data.clickable ? "crosshair" : "";
  s.image.onload = s.image.onerror = () => s.frame && render();
  show(data.frame);
  if (!s.observer) {
    s.observer = new ResizeObserver((entries) => {
      s.width = entries[entries.length - 1].contentRect.width;
      s.style = s.fontPx = s.ink = null;  // projector mode changes the font with the width
      if (s.image.complete && s.image.naturalWidth && s.frame) draw();
    });
    s.observer.observe(canvas);
  }
  const dot = (colour, hollow) =>
    `<i class="dot" style="${hollow ? `border: 2px solid ${colour}` : `background: ${colour}`}"></i>`;
  const p = data.points, touch = data.touch;
  // The legend's classes are the touch tool when the page has one: press a class, then click the
  // plane to add its points; Erase removes points near a click; press again to stop. A regression's
  // legend is its colour scale, and its tool Erase alone.
  const chip = (tool, inner, tip) =>
    `<button type="button" class="chip" data-tool="${tool}" title="${tip}">${inner}</button>`;
  const legend = root.querySelector(".legend");
  const bar = `<i class="bar" style="background: linear-gradient(to right, ${p.colors.join(", ")})"></i>`;
  const fmt = (v) => (v > 0 ? "+" : v < 0 ? "\u2212" : "") + Math.abs(v);
  const html =
    (p.scale
      ? `<span class="scale" role="img" aria-label="Colour scale: blue ${fmt(p.scale.low)}, ` +
        `grey 0, orange ${fmt(p.scale.high)}">${fmt(p.scale.low)}${bar}${fmt(p.scale.high)}</span>` +
        `<span>colour = ${p.scale.label}</span>`
      : p.colors.map((c, i) => touch
        ? chip(i, `${dot(c, false)}class ${i}`, `Click the plane to add training points of class ${i}`)
        : `<span>${dot(c, false)}class ${i}</span>`).join("")) +
    (touch ? chip("erase", "Erase", "Click the plane to erase the points near the click") : "") +
    `<span>${dot("currentColor", false)}train</span>` +
    (p.test.length ? `<span>${dot("currentColor", true)}test</span>` : "") +
    (touch && touch.summary ? '<span class="summary"></span>' : "");
  if (legend.dataset.html !== html) {  // rebuilt only when it changes: a pressed chip keeps the focus
    legend.innerHTML = html;
    legend.dataset.html = html;
  }
  legend.setAttribute("role", "group");
  const how = "Classes: press one, then click the plane to add its points";
  legend.setAttribute("aria-label", touch ? how : "Classes");
  for (const b of legend.querySelectorAll(".chip")) {
    b.setAttribute("aria-pressed", String(b.dataset.tool === String(touch.chosen)));
  }
  if (touch && touch.summary) legend.querySelector(".summary").textContent = touch.summary;
  if (!s.chips) {
    s.chips = true;
    legend.addEventListener("click", (e) => {
      const b = e.target.closest("button.chip");
      if (!b) return;
      const on = b.getAttribute("aria-pressed") !== "true";
      for (const c of legend.querySelectorAll(".chip")) c.setAttribute("aria-pressed", "false");
      b.setAttribute("aria-pressed", String(on));
      s.tools = (s.tools || 0) + 1;
      s.trigger("tool", { tool: on ? b.dataset.tool : null, n: s.tools });
    });
  }
  if (!data.debug) root.querySelector(".rate").textContent = "";
  if (data.playing) play();
}
"""

_component = None
PLANE_KEY = "pg_plane"


def plane_stream() -> Stream:
    """This visitor's stream of frames, made on their first visit to the playground."""
    if "pg_stream" not in st.session_state:
        st.session_state.pg_stream = Stream(visitor())
    return st.session_state.pg_stream


def plane(
    stream: Stream,
    frame: dict[str, Any],
    points: dict[str, Any],
    presenter: bool,
    debug: bool,
    on_click: Callable[[float, float], None] | None = None,
    touch: dict[str, Any] | None = None,
    on_touch: Callable[[str | None], None] | None = None,
    probe: tuple[float, float] | None = None,
) -> None:
    """The numbers and the plane: `frame` now (Stream.update's), `points` (plane_points'); while
    the stream plays, the canvas fetches its own frames. The canvas's data-step is the step of
    the frame it drew last (tests wait on it). A click inside the axes calls `on_click(x, y)`
    with the point in the plane's coordinates, before the page reruns; a `probe` point is marked.
    With `touch` ({"chosen": a class, "erase" or None, "summary": text}) the legend's classes are
    buttons choosing what a click does: pressing one calls `on_touch` with its class ("0", "1",
    …), "erase" or None."""
    global _component
    if _component is None:  # registered once per process
        _component = st.components.v2.component("mlp_plane", html=_HTML, css=_CSS, js=_JS)
    data = {
        "points": points,
        "frame": frame,
        "stream": stream.token,
        "key": stream.key,
        "path": frame_path(),
        "header": TOKEN_HEADER,
        "interval": stream.frame_seconds,
        "playing": stream.playing,
        "presenter": presenter,
        "debug": debug,
        "clickable": on_click is not None,
        "touch": touch,
        "probe": list(probe) if probe else None,
    }

    def clicked() -> None:
        click = st.session_state[PLANE_KEY].get("click")
        if on_click is not None and click:
            on_click(float(click["x"]), float(click["y"]))

    def chose() -> None:
        tool = st.session_state[PLANE_KEY].get("tool")
        if on_touch is not None and tool:
            on_touch(None if tool.get("tool") is None else str(tool["tool"]))

    _component(
        key=PLANE_KEY, data=data, on_ended_change=lambda: None, on_click_change=clicked, on_tool_change=chose
    )
