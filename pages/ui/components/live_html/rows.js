// What a redraw does to a table's rows, decided without the page: pure, so Node tests it
// (tests/js/live_html.test.mjs).

export const SETTLE_MS = 600; // a row that just moved, or a click just sent: a second click waits this long

// A row's key: its `data-key` (what names it: a nickname), else its place.
export function keyOf(html, i) {
  return html.match(/^<tr data-key="([^"]*)"/)?.[1] ?? `#${i}`;
}

// The plan for rows drawn before (`drawn`: key -> {html, index}) and the rows wanted now (HTML,
// in order): the keys to remove, and for each wanted row its key, whether it is new, whether its
// cells changed (patched in place) and whether it moved (a new place: its button waits SETTLE_MS).
export function plan(drawn, rows) {
  const keys = rows.map(keyOf);
  const wanted = new Set(keys);
  const remove = [...drawn.keys()].filter((key) => !wanted.has(key));
  const steps = rows.map((html, i) => {
    const before = drawn.get(keys[i]);
    return {
      key: keys[i],
      html,
      isNew: !before,
      changed: !!before && before.html !== html,
      moved: !!before && before.index !== undefined && before.index !== i,
    };
  });
  return { remove, steps };
}

// Whether a click on a row's button counts: not one meant for another row (this one moved under
// the pointer a moment ago), nor the second of a double click.
export function clickCounts(now, movedAt, sentAt) {
  return now - (movedAt ?? -1e9) >= SETTLE_MS && now - (sentAt ?? -1e9) >= SETTLE_MS;
}
