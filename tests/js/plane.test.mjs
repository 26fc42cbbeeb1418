// The plane's pure parts (pages/ui/components/plane/): where a pointer lands on the plane, and
// what a frame's message says. Run: node --test tests/js/
import assert from "node:assert/strict";
import { test } from "node:test";

import { decodeFrame, frameRequest, saying } from "../../pages/ui/components/plane/frames.js";
import { legendHtml } from "../../pages/ui/components/plane/input.js";
import { fromPx, layout, toPx } from "../../pages/ui/components/plane/layout.js";

const extent = [-2, 2, -1, 3];

test("the axes leave room for the ticks' labels, in the page's font and the screen's pixels", () => {
  const box = layout(16, 800, 2); // a 400 px canvas on a screen of 2 pixels a CSS pixel
  assert.equal(box.em, 32);
  assert.deepEqual([box.x, box.y], [2.6 * 32, 0.4 * 32]);
  assert.equal(box.w, 800 - 3.0 * 32);
  assert.ok(Math.abs(box.h - (800 - 2.8 * 32)) < 1e-9);
});

test("a pointer's pixel is the plane's point under it, and the plane's point draws there", () => {
  const box = layout(16, 400, 1);
  assert.deepEqual(fromPx(extent, box, box.x, box.y), { x: -2, y: 3 }); // top left
  assert.deepEqual(fromPx(extent, box, box.x + box.w, box.y + box.h), { x: 2, y: -1 }); // bottom right
  assert.deepEqual(fromPx(extent, box, box.x + box.w / 2, box.y + box.h / 4), { x: 0, y: 2 });
  for (const [x, y] of [
    [0.5, -0.25],
    [-1.9, 2.8],
    [1.234, 0.001],
  ]) {
    const [px, py] = toPx(extent, box, x, y);
    const back = fromPx(extent, box, px, py);
    assert.ok(Math.abs(back.x - x) < 1e-4 && Math.abs(back.y - y) < 1e-4, `${x}, ${y}`);
  }
});

test("a click outside the axes (on a tick's label) is no point of the plane", () => {
  const box = layout(16, 400, 1);
  assert.equal(fromPx(extent, box, box.x - 1, box.y + 10), null);
  assert.equal(fromPx(extent, box, box.x + 10, box.y + box.h + 1), null);
});

test("a frame's message is its status and its frame; a socket sends the token and the key", () => {
  const [status, frame] = decodeFrame('{"status": 200, "seq": 7, "step": 70, "finished": false}');
  assert.equal(status, 200);
  assert.deepEqual(frame, { seq: 7, step: 70, finished: false });
  assert.throws(() => decodeFrame("not json"));
  assert.equal(frameRequest("token", "key"), "token key");
  assert.equal(frameRequest("token", null), "token");
  assert.equal(saying({ finished: true, banner: null }), "true|null");
});

test("the legend's chips are the touch tool, and a regression's legend its colour scale", () => {
  const points = { colors: ["#0072B2", "#E69F00"], test: [[0, 0, 1]] };
  const plain = legendHtml(points, null);
  assert.ok(plain.includes("class 0") && plain.includes("test") && !plain.includes("<button"));
  const touch = legendHtml(points, { chosen: "1", summary: "3 added" });
  assert.equal((touch.match(/<button/g) || []).length, 3); // two classes and Erase
  assert.ok(touch.includes('data-tool="erase"') && touch.includes('class="summary"'));
  const scale = legendHtml(
    { colors: ["#0072B2", "#E69F00"], test: [], scale: { low: -1, high: 1, label: "y" } },
    null,
  );
  assert.ok(scale.includes("\u22121") && scale.includes("+1") && scale.includes("colour = y"));
});
