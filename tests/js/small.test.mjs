// The smaller components' pure parts: the pad's pointer, the network view's picks, the
// instructor link's secret.
import assert from "node:assert/strict";
import { test } from "node:test";

import { padPoint } from "../../pages/ui/components/digit_pad/digit_pad.js";
import { secretOf } from "../../pages/ui/components/link_secret/link_secret.js";
import { picked } from "../../pages/ui/components/network/network.js";

test("a pointer on the pad is its point in the pad's 280 × 280 pixels, however large it is drawn", () => {
  const rect = { left: 100, top: 50, width: 220, height: 220 };
  assert.deepEqual(padPoint(100, 50, rect), [0, 0]);
  assert.deepEqual(padPoint(320, 270, rect), [280, 280]);
  assert.deepEqual(padPoint(210, 160, rect), [140, 140]);
});

test("a click on the network view names a unit or an edge", () => {
  assert.deepEqual(picked({ layer: "1", unit: "2" }), ["unit", { layer: 1, unit: 2 }]);
  assert.deepEqual(picked({ edge: "2,0,3" }), ["edge", { layer: 2, out: 0, inp: 3 }]);
  assert.equal(picked({}), null);
});

test("an instructor link's secret is read from its fragment alone, of the app's own letters", () => {
  assert.equal(secretOf("#key=Dlh_tr-awi634"), "Dlh_tr-awi634");
  assert.equal(secretOf("#key="), null);
  assert.equal(secretOf("#key=<script>"), null);
  assert.equal(secretOf("#other=abc"), null);
  assert.equal(secretOf(`#key=${"x".repeat(101)}`), null);
});
