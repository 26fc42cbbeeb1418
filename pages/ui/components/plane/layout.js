// Where things are on the plane's canvas: the axes' box, and the way between the plane's own
// coordinates (x1, x2) and the canvas's pixels. Pure: Node tests it (tests/js/plane.test.mjs).

// The axes' box on a square canvas of `size` device pixels: room for the ticks' labels (left and
// below) in the page's font, `fontPx` CSS pixels at `dpr` device pixels each.
export function layout(fontPx, size, dpr) {
  const em = fontPx * dpr;
  const left = 2.6 * em;
  const bottom = 2.4 * em;
  const top = 0.4 * em;
  const right = 0.4 * em;
  return { em, x: left, y: top, w: size - left - right, h: size - top - bottom };
}

// A point of the plane (extent [x0, x1, y0, y1]) in the box's pixels; y grows upwards.
export function toPx(extent, box, x, y) {
  const [x0, x1, y0, y1] = extent;
  return [box.x + ((x - x0) / (x1 - x0)) * box.w, box.y + ((y1 - y) / (y1 - y0)) * box.h];
}

// The plane's point under a pixel of the canvas, to 4 decimals; null outside the axes.
export function fromPx(extent, box, px, py) {
  if (px < box.x || px > box.x + box.w || py < box.y || py > box.y + box.h) return null;
  const [x0, x1, y0, y1] = extent;
  const x = x0 + ((px - box.x) / box.w) * (x1 - x0);
  const y = y1 - ((py - box.y) / box.h) * (y1 - y0);
  return { x: Math.round(x * 1e4) / 1e4, y: Math.round(y * 1e4) / 1e4 };
}
