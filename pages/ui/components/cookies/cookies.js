// The app's cookies, set by the server: this posts the one-time ticket a script run handed over
// (pages/ui/cookies.py), once, however many runs draw it.
export default function ({ data }) {
  if (!data.ticket || window.__mlpTicket === data.ticket) return;
  window.__mlpTicket = data.ticket;
  fetch(data.path, {
    method: "POST",
    headers: { "X-Ticket": data.ticket },
    credentials: "same-origin",
  });
}
