// An instructor link's secret rides after "#key=" (the address's fragment, which a browser never
// sends): read it on opening, or when a link is pasted over a board's address (which changes only
// the fragment), take it off the address bar (a projector shows it) and hand it to the page.

export function secretOf(hash) {
  const found = hash.match(/^#key=([A-Za-z0-9_-]{1,100})$/);
  return found ? found[1] : null;
}

export default function (component) {
  window.__mlpLinkSecret = component.setTriggerValue; // the latest render's
  const read = () => {
    const secret = secretOf(window.location.hash);
    if (!secret) return;
    history.replaceState(history.state, "", window.location.pathname + window.location.search);
    window.__mlpLinkSecret("key", secret);
  };
  if (!window.__mlpLinkSecretHeard) {
    window.__mlpLinkSecretHeard = true;
    window.addEventListener("hashchange", read);
  }
  read();
}
