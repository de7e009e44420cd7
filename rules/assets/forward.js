// Old links /#<country>-<erp> pointed at matrix rows on the home page; the rows now live on /e-invoicing/.
// Loaded by the home page only (a file, not inline, so the page works under a strict CSP). The target is
// relative to the home page, so it holds on a site published under a path.
(function () {
  var m = /^#[a-z]{2}-[a-z0-9-]+$/.exec(location.hash);
  if (m) { location.replace("e-invoicing/" + m[0]); }
})();
