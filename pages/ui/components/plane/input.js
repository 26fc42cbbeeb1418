// What the plane takes from its visitor: a click inside the axes (a point, for the page to act
// on), and the legend's chips (the touch tool: a class to add points of, or Erase).

// The legend: the classes (buttons when the page has a touch tool), or a regression's colour
// scale, then train and test. `p`: the page's points; `touch`: {chosen, summary} or null.
export function legendHtml(p, touch) {
  const dot = (colour, hollow) =>
    `<i class="dot" style="${hollow ? `border: 2px solid ${colour}` : `background: ${colour}`}"></i>`;
  const chip = (tool, inner, tip) =>
    `<button type="button" class="chip" data-tool="${tool}" title="${tip}">${inner}</button>`;
  const bar = `<i class="bar" style="background: linear-gradient(to right, ${p.colors.join(", ")})"></i>`;
  const fmt = (v) => (v > 0 ? "+" : v < 0 ? "\u2212" : "") + Math.abs(v);
  const classes = p.scale
    ? `<span class="scale" role="img" aria-label="Colour scale: blue ${fmt(p.scale.low)}, ` +
      `grey 0, orange ${fmt(p.scale.high)}">${fmt(p.scale.low)}${bar}${fmt(p.scale.high)}</span>` +
      `<span>colour = ${p.scale.label}</span>`
    : p.colors
        .map((c, i) =>
          touch
            ? chip(i, `${dot(c, false)}class ${i}`, `Click the plane to add training points of class ${i}`)
            : `<span>${dot(c, false)}class ${i}</span>`,
        )
        .join("");
  return (
    classes +
    (touch ? chip("erase", "Erase", "Click the plane to erase the points near the click") : "") +
    `<span>${dot("currentColor", false)}train</span>` +
    (p.test.length ? `<span>${dot("currentColor", true)}test</span>` : "") +
    (touch?.summary ? '<span class="summary"></span>' : "")
  );
}

// A click inside the axes: its point in the plane's coordinates, to the page (`s.trigger`).
// `boxAt(dpr)`: the axes' box as the canvas is drawn now.
export function listenForClicks(canvas, s, boxAt) {
  canvas.addEventListener("click", (e) => {
    const dpr = window.devicePixelRatio || 1;
    const box = boxAt(dpr);
    const rect = canvas.getBoundingClientRect();
    const point = fromPx(
      s.data.points.extent,
      box,
      (e.clientX - rect.left) * dpr,
      (e.clientY - rect.top) * dpr,
    );
    if (!point) return;
    s.clicked = (s.clicked || 0) + 1; // two clicks on one spot are two clicks
    s.trigger("click", { ...point, n: s.clicked });
  });
}

// A chip pressed: it alone is on (or none, pressed again), and the page hears which tool.
export function listenForChips(legend, s) {
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
