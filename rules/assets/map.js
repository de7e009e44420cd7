// The home page's map: the focus ring of a country drawn above its neighbours. An SVG draws its shapes in
// the order they come, so a focused country's outline was half covered by the countries drawn after it.
// When a country link has the keyboard focus, a copy of its outline (a white halo under a ring of the
// focus colour, so the ring shows on dark and light fills alike) is drawn last in its panel, ignored by
// the pointer and by assistive technology. The links stay where they are, so the Tab order is unchanged.
// Without this script the ring is still drawn (site.css), under the neighbours.
(function () {
  "use strict";
  var SVG = "http://www.w3.org/2000/svg";
  var ring = null;

  function clear() {
    if (ring) { ring.remove(); ring = null; }
  }

  document.addEventListener("focusin", function (event) {
    clear();
    var link = event.target.closest && event.target.closest("svg.fig-map a.country");
    if (!link || !link.matches(":focus-visible")) { return; }
    ring = document.createElementNS(SVG, "g");
    ring.setAttribute("class", "focus-ring");
    ring.setAttribute("aria-hidden", "true");
    ["halo", "ring"].forEach(function (layer) {
      link.querySelectorAll(".shape, .marker").forEach(function (part) {
        var copy = part.cloneNode(false);
        copy.removeAttribute("id");
        copy.setAttribute("class", layer);
        ring.appendChild(copy);
      });
    });
    link.parentNode.appendChild(ring);
  });
  document.addEventListener("focusout", clear);

  // The colouring chosen is kept in the address (?map=<toggle or model>), so a coloured map can be
  // shared; the first choice, the default, leaves the address bare. Without this script the switch still
  // colours the map (site.css), and the address keeps nothing.
  var choices = document.querySelectorAll("input[name='map-toggle']");
  if (!choices.length) { return; }
  var wanted = new URLSearchParams(location.search).get("map");
  Array.prototype.forEach.call(choices, function (input) {
    if (wanted && input.value === wanted) { input.checked = true; }
    input.addEventListener("change", function () {
      var params = new URLSearchParams(location.search);
      if (input === choices[0]) { params.delete("map"); } else { params.set("map", input.value); }
      var query = params.toString();
      history.replaceState(null, "", location.pathname + (query ? "?" + query : "") + location.hash);
    });
  });
})();
