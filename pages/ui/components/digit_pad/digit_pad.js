// A drawing pad for digits (pages/ui/pad.py): the ink, at `data.side` × `data.side`, goes to the
// page as base64 bytes (255 = ink) when a stroke ends.

// The pad's point under a pointer, in its own 280 × 280 pixels.
export function padPoint(clientX, clientY, rect, size = 280) {
  return [((clientX - rect.left) * size) / rect.width, ((clientY - rect.top) * size) / rect.height];
}

export default function (component) {
  const { data, parentElement, setStateValue } = component;
  const canvas = parentElement.querySelector("canvas");
  if (canvas.dataset.ready) return; // already wired: keep the drawing across reruns
  canvas.dataset.ready = "1";
  const side = data.side;
  const ctx = canvas.getContext("2d");
  const blank = () => {
    ctx.fillStyle = "#000";
    ctx.fillRect(0, 0, 280, 280);
  };
  blank();
  Object.assign(ctx, { lineWidth: 22, lineCap: "round", lineJoin: "round", strokeStyle: "#fff" });
  let last = null;
  const at = (e) => padPoint(e.clientX, e.clientY, canvas.getBoundingClientRect());
  const line = (a, b) => {
    ctx.beginPath();
    ctx.moveTo(...a);
    ctx.lineTo(...b);
    ctx.stroke();
  };
  canvas.onpointerdown = (e) => {
    last = at(e);
    canvas.setPointerCapture(e.pointerId);
    line(last, last);
  };
  canvas.onpointermove = (e) => {
    if (last) {
      const p = at(e);
      line(last, p);
      last = p;
    }
  };
  canvas.onpointerup = () => {
    last = null;
    const small = document.createElement("canvas");
    small.width = small.height = side;
    const s = small.getContext("2d");
    s.drawImage(canvas, 0, 0, side, side);
    const rgba = s.getImageData(0, 0, side, side).data;
    let text = "";
    for (let i = 0; i < side * side; i++) text += String.fromCharCode(rgba[4 * i]);
    setStateValue("pixels", btoa(text));
  };
  parentElement.querySelector(".clear").onclick = () => {
    blank();
    setStateValue("pixels", "");
  };
}
