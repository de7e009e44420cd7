// Sorting of the tables marked `sortable`: each column heading becomes a button; the first press sorts
// ascending, the next descending, and `aria-sort` says which. Numbers sort as numbers, everything else
// by its text (accents folded); equal rows keep their order. Without JavaScript the tables stay in the
// order the build wrote (by country name).
(function () {
  "use strict";

  function key(cell) {
    var text = (cell ? cell.textContent : "").trim();
    var number = /^-?\d+(\.\d+)?$/.test(text) ? parseFloat(text) : null;
    // A dash or "unknown" is a value too, but it sorts after every known one.
    var unknown = text === "" || text === "–" || /^(unknown|not stated|not established)/i.test(text);
    return { number: number, text: text.toLowerCase().normalize("NFD").replace(/[\u0300-\u036f]/g, ""), unknown: unknown };
  }

  function compare(a, b) {
    if (a.unknown !== b.unknown) { return a.unknown ? 1 : -1; }
    if (a.number !== null && b.number !== null) { return a.number - b.number; }
    return a.text < b.text ? -1 : a.text > b.text ? 1 : 0;
  }

  function enhance(table) {
    var headings = table.querySelectorAll("thead th");
    var body = table.tBodies[0];
    if (!body) { return; }
    Array.prototype.forEach.call(headings, function (th, column) {
      var label = th.textContent.trim();
      var button = document.createElement("button");
      button.type = "button";
      button.className = "sort";
      if (th.querySelector("a")) {
        // A heading that is a link keeps it; the button beside it sorts.
        button.setAttribute("aria-label", "Sort by " + label);
        button.textContent = "↕";
        th.appendChild(button);
      } else {
        button.textContent = label;
        var arrow = document.createElement("span");
        arrow.className = "arrow";
        arrow.setAttribute("aria-hidden", "true");
        arrow.textContent = "↕";
        button.appendChild(arrow);
        th.textContent = "";
        th.appendChild(button);
      }
      button.addEventListener("click", function () {
        var ascending = th.getAttribute("aria-sort") !== "ascending";
        Array.prototype.forEach.call(headings, function (other) { other.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
        var rows = Array.prototype.slice.call(body.rows).map(function (row, order) {
          return { row: row, order: order, key: key(row.cells[column]) };
        });
        rows.sort(function (a, b) {
          var c = compare(a.key, b.key);
          if (c !== 0 && !(a.key.unknown || b.key.unknown)) { c = ascending ? c : -c; }
          return c || a.order - b.order;
        });
        rows.forEach(function (r) { body.appendChild(r.row); });
      });
    });
  }

  var tables = document.querySelectorAll("table.sortable");
  for (var i = 0; i < tables.length; i++) { enhance(tables[i]); }
})();
