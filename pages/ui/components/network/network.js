// The network view (pages/ui/units.py): TensorFlow Playground's picture of the network, its
// units and edges clickable (a unit: on the plane; an edge: its weight's editor).

// What a click on the drawing names: a unit {layer, unit}, an edge {layer, out, inp}, or null.
export function picked(dataset) {
  if (dataset.unit !== undefined) return ["unit", { layer: +dataset.layer, unit: +dataset.unit }];
  if (dataset.edge !== undefined) {
    const [layer, out, inp] = dataset.edge.split(",").map(Number);
    return ["edge", { layer, out, inp }];
  }
  return null;
}

export default function (component) {
  const { data, parentElement, setTriggerValue } = component;
  const root = parentElement.querySelector(".mlp-net");
  root.style.minWidth = `${data.minPx}px`; // its labels readable: scrolls sideways in a narrow column
  root.__trigger = setTriggerValue;
  if (root.__svg !== data.svg) {
    // redrawn about once a second while playing: keep the keyboard's place
    const was = root.contains(document.activeElement) ? document.activeElement.dataset : null;
    root.innerHTML = data.svg;
    root.__svg = data.svg;
    const again =
      was?.layer && root.querySelector(`.unit[data-layer="${was.layer}"][data-unit="${was.unit}"]`);
    if (again) again.focus();
  }
  if (root.__wired) return;
  root.__wired = true;
  const pick = (e) => {
    const target = e.target.closest(".unit") || e.target.closest(".edge");
    const found = target && picked(target.dataset);
    if (found) root.__trigger(...found);
  };
  root.addEventListener("click", pick);
  root.addEventListener("keydown", (e) => {
    if ((e.key === "Enter" || e.key === " ") && e.target.closest(".unit")) {
      e.preventDefault();
      pick(e);
    }
  });
}
