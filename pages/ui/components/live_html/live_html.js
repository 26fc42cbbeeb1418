// HTML that changes in place (pages/ui/live_html.py): the same HTML again costs nothing; of a
// table, a row keeps its node and only its cells that changed are replaced (rows.js decides).

const parse = (html) => {
  const made = document.createElement("template");
  made.innerHTML = html;
  return made.content.firstElementChild;
};

// A row drawn before keeps its node (and the focus of a button in it): only its cells whose HTML
// changed are replaced.
const patch = (row, html) => {
  const cells = [...parse(html).cells]; // moved out of their parsed row one by one below
  cells.forEach((cell, j) => {
    const old = row.cells[j];
    if (!old) row.appendChild(cell);
    else if (old.outerHTML !== cell.outerHTML) old.replaceWith(cell);
  });
  while (row.cells.length > cells.length) row.lastElementChild.remove();
};

export default function ({ data, parentElement, setTriggerValue }) {
  let box = parentElement.querySelector(":scope > .live-html");
  if (!box) {
    box = document.createElement("div");
    box.className = "live-html";
    parentElement.appendChild(box);
    box.addEventListener("click", (event) => {
      // a row's button: its value to the page
      const button = event.target.closest("button[data-value]");
      if (!button || !box.contains(button)) return;
      const now = performance.now();
      if (!clickCounts(now, button.closest("tr")?.__moved, box.__sent)) return;
      box.__sent = now;
      box.__clicked("clicked", button.dataset.value);
    });
  }
  box.__clicked = setTriggerValue; // the latest render's
  if (box.__frame !== data.frame) {
    // a new frame: all of it again
    box.innerHTML = data.frame;
    box.__frame = data.frame;
  }
  const body = box.querySelector("tbody");
  if (!body) return;
  const drawn = new Map(
    [...body.rows].map((row) => [row.__key, { html: row.__html, index: row.__index, row }]),
  );
  const { remove, steps } = plan(drawn, data.rows);
  for (const key of remove) drawn.get(key).row.remove();
  const now = performance.now();
  steps.forEach((step, i) => {
    let row = drawn.get(step.key)?.row;
    if (step.isNew) {
      row = parse(step.html);
      row.__key = step.key;
    } else if (step.changed) patch(row, step.html);
    row.__html = step.html;
    if (body.rows[i] !== row) body.insertBefore(row, body.rows[i] ?? null);
    if (step.moved) row.__moved = now;
    row.__index = i;
  });
}
