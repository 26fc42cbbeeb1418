// The 2D playground's plane (pages/ui/plane.py): the numbers, the shaded boundary, the points,
// the axes. Its parts: layout.js (where things are), draw.js (the picture), frames.js (frames
// from the server while it plays), input.js (clicks and the legend's chips). The page's script
// hands it the frame of the moment; while the visitor plays, it fetches every next frame itself
// and asks the page to rerun only when the run ends or the page must say something new.

export default function (component) {
  const { data, parentElement, setTriggerValue } = component;
  const root = parentElement.querySelector(".plane");
  const canvas = root.querySelector("canvas");
  if (!root.__plane) root.__plane = { image: new Image(), key: null, seq: 0, loop: false };
  const s = root.__plane;
  s.data = data;
  s.trigger = setTriggerValue;
  s.told = null; // the page has just run: it knows what the server knew then
  // Which points the cached layer shows: clicks add and erase them, so every one counts.
  s.pointsKey = JSON.stringify([data.points.extent, data.points.train, data.points.test, data.points.colors]);
  root.classList.toggle("presenter", !!data.presenter);

  // What a frame's drawing reads of the page (the canvas's width, the font size, the ink) is read
  // once per run of the page, per resize and every 40th frame (a theme switched in the browser),
  // not every frame: read after the numbers' text changed, it would make the browser lay out
  // the whole page again.
  const style = () => {
    s.style ??= getComputedStyle(root);
    return s.style;
  };
  const fontPx = () => {
    s.fontPx ??= parseFloat(style().fontSize); // follows projector mode
    return s.fontPx;
  };
  const ink = () => {
    s.ink ??= style().color;
    return s.ink;
  };
  s.style = s.fontPx = s.ink = null;
  const boxAt = (dpr) => layout(fontPx(), Math.round(s.width * dpr), dpr);

  const draw = () => {
    s.drawn = (s.drawn || 0) + 1;
    if (s.drawn % 40 === 0) s.style = s.fontPx = s.ink = null;
    const d = s.data.points;
    const dpr = window.devicePixelRatio || 1;
    if (s.width === undefined) s.width = canvas.clientWidth; // then kept by the ResizeObserver
    const size = Math.max(1, Math.round(s.width * dpr));
    if (canvas.width !== size) {
      canvas.width = canvas.height = size;
      s.key = null;
    }
    const box = layout(fontPx(), size, dpr);
    const color = ink();
    const key = `${size}|${box.em}|${color}|${s.pointsKey}`;
    if (s.key !== key) {
      s.layer = staticLayer(d, size, box, dpr, color);
      s.key = key;
    }
    const g = canvas.getContext("2d");
    g.clearRect(0, 0, size, size);
    g.imageSmoothingEnabled = true;
    g.drawImage(s.image, box.x, box.y, box.w, box.h);
    g.drawImage(s.layer, 0, 0);
    if (s.data.probe) {
      const [px, py] = toPx(d.extent, box, s.data.probe[0], s.data.probe[1]);
      drawProbe(g, px, py, 0.45 * box.em, 2 * dpr, color);
    }
    canvas.dataset.step = String(s.frame.step);
    const discrete = String(!!s.frame.discrete);
    const extent = d.extent.join(" ");
    if (canvas.dataset.discrete !== discrete) canvas.dataset.discrete = discrete;
    if (canvas.dataset.extent !== extent) canvas.dataset.extent = extent; // for tests that click a point
  };

  // The numbers: built once, then only their text changes.
  const metrics = root.querySelector(".metrics");
  const showMetrics = (pairs) => {
    const labels = pairs.map(([label]) => label).join("|");
    if (metrics.dataset.labels !== labels) {
      // another task's numbers (a regression's MSE and R²)
      metrics.dataset.labels = labels;
      metrics.innerHTML = "";
      for (const [label] of pairs) {
        const m = document.createElement("div");
        m.className = "metric";
        m.dataset.label = label;
        m.innerHTML = '<div class="label"></div><div class="value"></div>';
        m.firstChild.textContent = label;
        metrics.appendChild(m);
      }
    }
    pairs.forEach(([, value], i) => {
      const cell = metrics.children[i].lastChild;
      if (cell.textContent !== value) cell.textContent = value; // an unchanged number costs no layout
    });
  };

  // A frame's words (its numbers, what the plane shows, the server's note) and its picture change
  // in one task, once its image is decoded: one style, layout and paint of the page a frame, not two.
  const words = (frame) => {
    showMetrics(frame.metrics);
    const view = root.querySelector(".view");
    const note = root.querySelector(".note");
    if (view.textContent !== (frame.view || "")) view.textContent = frame.view || ""; // a unit on the plane
    if (canvas.dataset.focus !== (frame.focus || "")) canvas.dataset.focus = frame.focus || "";
    s.label = s.label || canvas.getAttribute("aria-label"); // the boundary's, from the HTML
    if (canvas.getAttribute("aria-label") !== (frame.view || s.label)) {
      canvas.setAttribute("aria-label", frame.view || s.label);
    }
    if (note.textContent !== (frame.note || "")) note.textContent = frame.note || ""; // on capped steps
    s.times = (s.times || []).filter((t) => t > performance.now() - 3000).concat(performance.now());
    if (s.data.debug && s.times.length > 1) {
      const fps = (s.times.length - 1) / ((s.times[s.times.length - 1] - s.times[0]) / 1000);
      root.querySelector(".rate").textContent =
        `${fps.toFixed(1)} frames/s, ${frame.build_ms.toFixed(0)} ms to build one (server)`;
    }
  };
  const render = () => {
    if (s.unsaid) {
      words(s.unsaid);
      s.unsaid = null;
    }
    if (s.image.complete && s.image.naturalWidth) draw();
  };

  // A frame newer than the one on screen replaces it (true); it shows once its image is decoded.
  const show = (frame) => {
    if (s.stream === s.data.stream && frame.seq <= s.seq) return false;
    s.stream = s.data.stream;
    s.seq = frame.seq;
    s.frame = frame;
    s.unsaid = frame;
    if (s.image.src === frame.image && s.image.complete)
      render(); // the same image: no load event
    else s.image.src = frame.image;
    return true;
  };

  // Ask the page to rerun: once for each new thing it must hear between two of its runs.
  const tell = (said, seq) => {
    if (said === s.told) return;
    s.told = said;
    s.trigger("ended", seq);
  };

  // While playing: ask for the next frame once this one is drawn, at most every `interval` s.
  // The page reruns only when the run ends, its banner must change, or the server stopped it.
  const play = async () => {
    if (s.loop) return;
    s.loop = true;
    try {
      while (root.isConnected && s.data.playing) {
        const d = s.data;
        const started = performance.now();
        let rest = d.interval * 1000;
        try {
          const [status, f] = await ask(s, d);
          if (d.stream !== s.data.stream) continue; // an answer for a session the page has left
          if (status === 410) {
            // this server has no such session: a rerun reconnects the page
            if (!s.gone) {
              s.gone = true;
              s.trigger("ended", -1);
            }
            break;
          }
          if (f?.interval) rest = f.interval * 1000; // the server's pace as of this frame
          if (f && f.seq !== undefined) {
            if (show(f) && saying(f) !== saying(s.data.frame)) tell(saying(f), f.seq);
          } else if (f && f.playing === false) {
            tell("stopped", s.seq); // a Pause, the run's end or a failure: the page must show it
            rest = 500;
          } else {
            rest = 1000; // busy, or an error on the way: try again
          }
        } catch {
          rest = 1000; // the network, or no answer in 30 s: try again
        }
        await new Promise((done) => setTimeout(done, Math.max(0, rest - (performance.now() - started))));
      }
    } finally {
      s.loop = false;
      if (s.ws) s.ws.close(); // paused, finished or gone: the next Play opens another
      s.ws = null;
    }
  };

  if (!s.clicks) {
    s.clicks = true;
    listenForClicks(canvas, s, boxAt);
  }
  canvas.style.cursor = data.clickable ? "crosshair" : "";
  s.image.onload = s.image.onerror = () => s.frame && render();
  show(data.frame);
  if (!s.observer) {
    s.observer = new ResizeObserver((entries) => {
      s.width = entries[entries.length - 1].contentRect.width;
      s.style = s.fontPx = s.ink = null; // projector mode changes the font with the width
      if (s.image.complete && s.image.naturalWidth && s.frame) draw();
    });
    s.observer.observe(canvas);
  }
  // The legend's classes are the touch tool when the page has one: press a class, then click the
  // plane to add its points; Erase removes points near a click; press again to stop. A
  // regression's legend is its colour scale, and its tool Erase alone.
  const touch = data.touch;
  const legend = root.querySelector(".legend");
  const html = legendHtml(data.points, touch);
  if (legend.dataset.html !== html) {
    // rebuilt only when it changes: a pressed chip keeps the focus
    legend.innerHTML = html;
    legend.dataset.html = html;
  }
  legend.setAttribute("role", "group");
  legend.setAttribute(
    "aria-label",
    touch ? "Classes: press one, then click the plane to add its points" : "Classes",
  );
  for (const b of legend.querySelectorAll(".chip")) {
    b.setAttribute("aria-pressed", String(b.dataset.tool === String(touch.chosen)));
  }
  if (touch?.summary) legend.querySelector(".summary").textContent = touch.summary;
  if (!s.chips) {
    s.chips = true;
    listenForChips(legend, s);
  }
  if (!data.debug) root.querySelector(".rate").textContent = "";
  if (data.playing) play();
}
