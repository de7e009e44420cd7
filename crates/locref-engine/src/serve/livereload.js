// locref serve: live reload.
(() => {
  // The tag of this page in the last build; a build that changes it reloads the page.
  let page = null;
  let events = null;
  const overlay = (text) => {
    let o = document.getElementById("__locref_error");
    if (!text) { if (o) o.remove(); return; }
    if (!o) {
      o = document.createElement("pre");
      o.id = "__locref_error";
      o.style.cssText = "position:fixed;inset:0;margin:0;padding:2em;background:rgba(20,0,0,.92);color:#fff;" +
        "font:14px/1.5 monospace;white-space:pre-wrap;z-index:2147483647;overflow:auto";
      document.body.appendChild(o);
    }
    o.textContent = "locref: the last build failed; showing the last good build.\n\n" + text;
  };
  const connect = () => {
    events = new EventSource("/__livereload");
    events.addEventListener("build", (e) => {
      const d = JSON.parse(e.data);
      const mine = d.pages[location.pathname] ?? null;
      if (page !== null && mine !== page) { location.reload(); return; }
      page = mine;
      overlay(d.error);
    });
  };
  // A page left for another (or kept in the back/forward cache) closes its stream: a browser opens at
  // most six connections to a host, and streams of pages no longer shown would use them all up.
  addEventListener("pagehide", () => { if (events) { events.close(); events = null; } });
  addEventListener("pageshow", (e) => { if (e.persisted) connect(); });
  connect();
})();
