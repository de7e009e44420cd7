// The filters of the ERP readiness board (/readiness/): one ERP (each phase then shows only that ERP's
// answer, in the column of its group) and any countries (none chosen: all), so "is Odoo ready for
// Belgium's and Poland's mandates?" is one view. The form is hidden until this script shows it, so
// without JavaScript the whole board is the page. The choices are kept in the query string
// (?erp=odoo&country=be,pl), so a filtered view can be shared; the #<phase> anchors are left alone.
(function () {
  "use strict";
  var form = document.getElementById("board-filters");
  var table = document.querySelector("table.board");
  if (!form || !table) { return; }
  var erp = document.getElementById("f-erp");
  var country = document.getElementById("f-country");
  var count = document.getElementById("f-count");
  var rows = Array.prototype.slice.call(table.tBodies[0].rows);

  function countries() {
    return Array.prototype.filter.call(country.options, function (o) { return o.selected; })
      .map(function (o) { return o.value; });
  }

  function apply() {
    var shown = 0;
    var chosen = countries();
    rows.forEach(function (row) {
      var visible = !chosen.length || chosen.indexOf(row.getAttribute("data-country")) >= 0;
      row.hidden = !visible;
      if (visible) { shown++; }
      Array.prototype.forEach.call(row.querySelectorAll("li[data-erp]"), function (item) {
        item.hidden = !!erp.value && item.getAttribute("data-erp") !== erp.value;
      });
      // A group left with no shown answer says so, as an empty group of the full board does.
      Array.prototype.forEach.call(row.querySelectorAll("td.group ul"), function (list) {
        var any = list.querySelector("li:not([hidden])");
        list.hidden = !any;
        var cell = list.parentNode;
        var none = cell.querySelector(".filtered-none");
        if (!any && !none) {
          none = document.createElement("span");
          none.className = "none filtered-none";
          none.textContent = "–";
          cell.appendChild(none);
        } else if (any && none) {
          cell.removeChild(none);
        }
      });
    });
    // With one ERP chosen, a support group none of the shown phases puts it in is left out, so the
    // columns that answer the question are the ones on screen.
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th) {
      var group = th.className.match(/\bg-[a-z-]+/);
      if (!group) { return; }
      var cells = table.querySelectorAll("tbody tr:not([hidden]) td." + group[0]);
      var used = !erp.value || Array.prototype.some.call(cells, function (cell) {
        return !!cell.querySelector("li:not([hidden])");
      });
      th.hidden = !used;
      Array.prototype.forEach.call(table.querySelectorAll("td." + group[0]), function (cell) {
        cell.hidden = !used;
      });
    });
    table.classList.toggle("one-erp", !!erp.value);
    var name = erp.value ? erp.options[erp.selectedIndex].text : "";
    var names = Array.prototype.filter.call(country.options, function (o) { return o.selected; })
      .map(function (o) { return o.text; });
    var where = names.length > 1 ? names.slice(0, -1).join(", ") + " and " + names[names.length - 1] : names[0];
    count.textContent = "Showing " + shown + " of " + rows.length + " phases" +
      (where ? ", in " + where : "") + (name ? ", " + name + " only" : "") + ".";
    // Written by hand, so the countries' comma stays a comma in an address a reader shares.
    var parts = [];
    if (erp.value) { parts.push("erp=" + encodeURIComponent(erp.value)); }
    if (chosen.length) { parts.push("country=" + chosen.map(encodeURIComponent).join(",")); }
    var query = parts.join("&");
    history.replaceState(null, "", location.pathname + (query ? "?" + query : "") + location.hash);
  }

  // Selects the options named in the address; a value the board does not list is left out.
  function choose(select, values) {
    for (var i = 0; i < select.options.length; i++) {
      select.options[i].selected = values.indexOf(select.options[i].value) >= 0;
    }
  }

  var params = new URLSearchParams(location.search);
  choose(erp, [params.get("erp") || ""]);
  choose(country, (params.get("country") || "").split(","));
  form.hidden = false;
  form.addEventListener("change", apply);
  form.addEventListener("submit", function (event) { event.preventDefault(); });
  apply();
  // A shared filtered view opens at what it shows ("Showing 8 of 65 phases, in Belgium and Poland, Odoo
  // only."), with those phases below (a #phase anchor keeps its own place).
  if ((params.get("erp") || params.get("country")) && !location.hash) {
    count.scrollIntoView({ block: "start" });
  }
})();
