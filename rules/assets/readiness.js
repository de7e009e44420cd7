// The filters of the ERP readiness board (/readiness/): one ERP (each phase then shows only that ERP's
// answer, in the column of its group) and one country. The form is hidden until this script shows it, so
// without JavaScript the whole board is the page. The choices are kept in the query string
// (?erp=odoo&country=be), so a filtered view can be shared; the #<phase> anchors are left alone.
(function () {
  "use strict";
  var form = document.getElementById("board-filters");
  var table = document.querySelector("table.board");
  if (!form || !table) { return; }
  var erp = document.getElementById("f-erp");
  var country = document.getElementById("f-country");
  var count = document.getElementById("f-count");
  var rows = Array.prototype.slice.call(table.tBodies[0].rows);

  function apply() {
    var shown = 0;
    rows.forEach(function (row) {
      var visible = !country.value || row.getAttribute("data-country") === country.value;
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
    var name = erp.value ? erp.options[erp.selectedIndex].text : "";
    count.textContent = "Showing " + shown + " of " + rows.length + " phases" +
      (name ? ", " + name + " only" : "") + ".";
    var params = new URLSearchParams();
    if (erp.value) { params.set("erp", erp.value); }
    if (country.value) { params.set("country", country.value); }
    var query = params.toString();
    history.replaceState(null, "", location.pathname + (query ? "?" + query : "") + location.hash);
  }

  function choose(select, value) {
    for (var i = 0; i < select.options.length; i++) {
      if (select.options[i].value === value) { select.value = value; }
    }
  }

  var params = new URLSearchParams(location.search);
  choose(erp, params.get("erp") || "");
  choose(country, params.get("country") || "");
  form.hidden = false;
  form.addEventListener("change", apply);
  form.addEventListener("submit", function (event) { event.preventDefault(); });
  apply();
})();
