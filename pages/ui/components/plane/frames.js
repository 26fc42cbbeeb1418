// Frames from the server while the plane plays (pages/ui/frames.py): over the tab's WebSocket to
// the frame route, one message a frame, or over HTTP if no socket of this tab ever opened.

// A frame's message, as the server sends it: [status, the frame] (the frame without its status).
export function decodeFrame(text) {
  const { status, ...frame } = JSON.parse(text);
  return [status, frame];
}

// What the socket sends for a frame: the stream's token, and the key the page's last run gave
// (the first socket to send a key holds the stream: its frames keep the page's lease).
export function frameRequest(stream, key) {
  return key ? `${stream} ${key}` : stream;
}

// What the page must hear of a frame (the run ended, its banner changed), as one string: the
// page reruns once for each new one.
export function saying(frame) {
  return `${frame.finished}|${frame.banner}`;
}

// One frame over HTTP: [status, body or null].
export async function overHttp(d) {
  const r = await fetch(d.path, {
    cache: "no-store",
    headers: { [d.header]: d.stream },
    signal: AbortSignal.timeout(30000),
  });
  return [r.status, [200, 410, 500].includes(r.status) ? await r.json() : null];
}

// One frame over the plane's socket (`s` keeps it between frames); over HTTP once no socket of
// this tab ever opened (a proxy that won't upgrade this path). No answer in 30 s: an error.
export function ask(s, d) {
  if (s.http) return overHttp(d);
  let ws = s.ws;
  if (!ws || ws.readyState > WebSocket.OPEN) {
    const url = new URL(d.path, location.href);
    url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
    ws = s.ws = new WebSocket(url);
  }
  return new Promise((resolve, reject) => {
    const end = (error, answer) => {
      clearTimeout(timer);
      ws.onopen = ws.onmessage = ws.onclose = null;
      if (answer) return resolve(answer);
      if (!s.opened) s.http = true; // no socket of this tab ever opened: HTTP from now on
      ws.close();
      reject(error);
    };
    const timer = setTimeout(() => end(new Error("no answer in 30 s")), 30000);
    ws.onmessage = (e) => {
      try {
        end(null, decodeFrame(e.data));
      } catch (error) {
        end(error);
      }
    };
    ws.onclose = () => end(new Error("the socket closed"));
    const send = () => {
      s.opened = true;
      ws.send(frameRequest(d.stream, d.key));
    };
    if (ws.readyState === WebSocket.OPEN) send();
    else ws.onopen = send;
  });
}
