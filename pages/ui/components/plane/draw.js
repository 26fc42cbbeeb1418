// The plane's picture: the boundary image the server drew, under a layer with everything else
// (points, axes, ticks), drawn once per data set, size and ink: a frame draws two images and no
// text (setting a font makes the browser resolve styles).

export function staticLayer(d, size, box, dpr, color) {
  const layer = document.createElement("canvas");
  layer.width = layer.height = size;
  const g = layer.getContext("2d");
  const r = 0.32 * box.em;
  const ring = (x, y, colour, width) => {
    g.beginPath();
    g.arc(x, y, r, 0, 2 * Math.PI);
    g.lineWidth = width;
    g.strokeStyle = colour;
    g.stroke();
  };
  for (const [x, y, c] of d.train) {
    const [px, py] = toPx(d.extent, box, x, y);
    g.beginPath();
    g.arc(px, py, r, 0, 2 * Math.PI);
    g.fillStyle = d.colors[c];
    g.fill();
    ring(px, py, "rgba(255,255,255,0.9)", dpr);
  }
  for (const [x, y, c] of d.test) {
    const [px, py] = toPx(d.extent, box, x, y);
    ring(px, py, "rgba(255,255,255,0.9)", 3.5 * dpr);
    ring(px, py, d.colors[c], 2 * dpr);
  }
  g.strokeStyle = color;
  g.globalAlpha = 0.5;
  g.lineWidth = dpr;
  g.strokeRect(box.x, box.y, box.w, box.h);
  g.globalAlpha = 1;
  g.fillStyle = color;
  g.font = `${box.em}px sans-serif`;
  g.textAlign = "center";
  g.textBaseline = "top";
  for (const t of d.xticks) g.fillText(String(t), toPx(d.extent, box, t, 0)[0], box.y + box.h + 0.3 * box.em);
  g.fillText("x1", box.x + box.w / 2, box.y + box.h + 1.3 * box.em);
  g.textAlign = "right";
  g.textBaseline = "middle";
  for (const t of d.yticks) g.fillText(String(t), box.x - 0.35 * box.em, toPx(d.extent, box, 0, t)[1]);
  g.save();
  g.translate(0.6 * box.em, box.y + box.h / 2);
  g.rotate(-Math.PI / 2);
  g.textAlign = "center";
  g.fillText("x2", 0, 0);
  g.restore();
  return layer;
}

// The point whose computation the page shows: a cross.
export function drawProbe(g, px, py, r, width, color) {
  g.lineWidth = width;
  g.strokeStyle = color;
  g.beginPath();
  g.moveTo(px - r, py);
  g.lineTo(px + r, py);
  g.moveTo(px, py - r);
  g.lineTo(px, py + r);
  g.stroke();
}
