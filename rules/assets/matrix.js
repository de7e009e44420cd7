// The filters of the e-invoicing matrix (/e-invoicing/): by region, by B2B mandate status, by B2B
// e-invoicing model, one ERP, and
// hiding what is not established (rows with no established cell among the shown ERPs, and the dashes of
// the rest). The form is hidden until this script shows it, so without JavaScript the full matrix is the
// page. The choices are kept in the query string, so a filtered view can be shared; the #<country> and
// #<country>-<erp> anchors are left alone.
(function () {
  "use strict";
  var form = document.getElementById("matrix-filters");
  var table = document.querySelector("table.matrix");
  if (!form || !table) { return; }
  var region = document.getElementById("f-region");
  var mandate = document.getElementById("f-mandate");
  var model = document.getElementById("f-model");
  var erp = document.getElementById("f-erp");
  var known = document.getElementById("f-known");
  var count = document.getElementById("f-count");
  var rows = Array.prototype.slice.call(table.tBodies[0].rows);
  var columns = table.querySelectorAll("[data-erp]");

  function apply() {
    var shown = 0;
    var oneErp = erp.value;
    Array.prototype.forEach.call(columns, function (cell) {
      cell.hidden = !!oneErp && cell.getAttribute("data-erp") !== oneErp;
    });
    table.classList.toggle("hide-unknown", known.checked);
    table.classList.toggle("one-erp", !!oneErp);
    rows.forEach(function (row) {
      var visible = (!region.value || row.getAttribute("data-region") === region.value) &&
        (!mandate.value || row.getAttribute("data-mandate") === mandate.value) &&
        (!model.value || row.getAttribute("data-model") === model.value);
      if (visible && known.checked) {
        visible = Array.prototype.some.call(row.querySelectorAll("td[data-erp]"), function (cell) {
          return !cell.hidden && !cell.classList.contains("s-unknown");
        });
      }
      row.hidden = !visible;
      if (visible) { shown++; }
    });
    count.textContent = "Showing " + shown + " of " + rows.length + " countries" +
      (oneErp ? ", one ERP" : "") + ".";
    var params = new URLSearchParams();
    if (region.value) { params.set("region", region.value); }
    if (mandate.value) { params.set("mandate", mandate.value); }
    if (model.value) { params.set("model", model.value); }
    if (oneErp) { params.set("erp", oneErp); }
    if (known.checked) { params.set("established", "1"); }
    var query = params.toString();
    history.replaceState(null, "", location.pathname + (query ? "?" + query : "") + location.hash);
  }

  function choose(select, value) {
    for (var i = 0; i < select.options.length; i++) {
      if (select.options[i].value === value) { select.value = value; }
    }
  }

  var params = new URLSearchParams(location.search);
  choose(region, params.get("region") || "");
  choose(mandate, params.get("mandate") || "");
  choose(model, params.get("model") || "");
  choose(erp, params.get("erp") || "");
  known.checked = params.get("established") === "1";
  // A cell the keyboard reaches is scrolled wholly into the grid's view, clear of the sticky headings
  // (its scroll margins in site.css): browsers leave a cell that is partly in view where it is, cut off at
  // the edge of the grid.
  table.addEventListener("focusin", function (event) {
    var cell = event.target.closest("td");
    if (cell) { cell.scrollIntoView({ block: "nearest", inline: "nearest" }); }
  });
  form.hidden = false;
  form.addEventListener("change", apply);
  form.addEventListener("submit", function (event) { event.preventDefault(); });
  apply();
})();
