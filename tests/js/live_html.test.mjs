// The board's row diffing (pages/ui/components/live_html/rows.js): what a redraw changes.
import assert from "node:assert/strict";
import { test } from "node:test";

import { clickCounts, keyOf, plan, SETTLE_MS } from "../../pages/ui/components/live_html/rows.js";

const row = (name, score) => `<tr data-key="${name}"><td>${name}</td><td>${score}</td></tr>`;
const drawn = (...rows) => new Map(rows.map((html, index) => [keyOf(html, index), { html, index }]));

test("a row is named by its data-key, else its place", () => {
  assert.equal(keyOf(row("ana", 1), 0), "ana");
  assert.equal(keyOf("<tr><td>x</td></tr>", 3), "#3");
  assert.equal(keyOf('<tr data-key="&lt;b&gt;ana&lt;/b&gt;"><td></td></tr>', 0), "&lt;b&gt;ana&lt;/b&gt;");
});

test("the same rows again change nothing", () => {
  const rows = [row("ana", "99%"), row("ben", "90%")];
  const { remove, steps } = plan(drawn(...rows), rows);
  assert.deepEqual(remove, []);
  assert.ok(steps.every((s) => !s.isNew && !s.changed && !s.moved));
});

test("a new score patches its row in place; an overtake moves both rows, each keeping its node", () => {
  const before = drawn(row("ana", "99%"), row("ben", "90%"));
  let { steps } = plan(before, [row("ana", "99%"), row("ben", "95%")]);
  assert.deepEqual(
    steps.map((s) => [s.key, s.changed, s.moved]),
    [
      ["ana", false, false],
      ["ben", true, false],
    ],
  );
  ({ steps } = plan(before, [row("ben", "100%"), row("ana", "99%")]));
  assert.deepEqual(
    steps.map((s) => [s.key, s.isNew, s.changed, s.moved]),
    [
      ["ben", false, true, true],
      ["ana", false, false, true],
    ],
  );
});

test("a hidden student's row goes, a newcomer's is made", () => {
  const { remove, steps } = plan(drawn(row("ana", 1), row("ben", 2)), [row("ana", 1), row("cy", 3)]);
  assert.deepEqual(remove, ["ben"]);
  assert.deepEqual(
    steps.map((s) => [s.key, s.isNew]),
    [
      ["ana", false],
      ["cy", true],
    ],
  );
});

test("a click counts unless its row just moved or a click was just sent", () => {
  assert.ok(clickCounts(10_000, undefined, undefined));
  assert.ok(!clickCounts(10_000, 10_000 - SETTLE_MS / 2, undefined)); // moved under the pointer
  assert.ok(!clickCounts(10_000, undefined, 10_000 - 100)); // a double click's second
  assert.ok(clickCounts(10_000, 10_000 - SETTLE_MS, 10_000 - SETTLE_MS));
});
