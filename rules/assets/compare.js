// The comparison page (/compare/): two to four countries side by side. The address keeps the choice
// (?c=it,pl; ?c=it&c=pl, as a form sends it, is read too), so a link shares it. Every country's cells are
// in the page; this script only shows the chosen ones, in the order chosen. Without it the page is the
// table of every country.
"use strict";
(function () {
  var MAX = 4;
  var MIN = 2;
  function start() {
    var form = document.getElementById("compare-form");
    var side = document.getElementById("side");
    if (!form || !side) return;
    var status = document.getElementById("compare-status");
    var choose = document.getElementById("compare-choose");
    var boxes = Array.prototype.slice.call(form.querySelectorAll("input[name=c]"));
    var byCode = {};
    boxes.forEach(function (box) {
      byCode[box.value] = box;
    });
    function nameOf(code) {
      return byCode[code].parentNode.textContent.trim();
    }
    function list(words) {
      if (words.length < 2) return words.join("");
      return words.slice(0, -1).join(", ") + " and " + words[words.length - 1];
    }
    // The codes of the address, in order, each once.
    var asked = [];
    new URLSearchParams(location.search).getAll("c").forEach(function (value) {
      value.split(",").forEach(function (code) {
        code = code.trim().toLowerCase();
        if (code && asked.indexOf(code) < 0) asked.push(code);
      });
    });
    var chosen = [];
    var ignored = [];
    var over = [];
    asked.forEach(function (code) {
      if (!Object.prototype.hasOwnProperty.call(byCode, code)) ignored.push(code);
      else if (chosen.length >= MAX) over.push(code);
      else chosen.push(code);
    });
    // What the address asked that cannot be shown, said until the reader changes the choice.
    var notes = [];
    if (ignored.length) notes.push("Not a country code of this site, so left out: " + ignored.join(", ") + ".");
    if (over.length) notes.push("At most " + MAX + " countries side by side, so left out: " + list(over.map(nameOf)) + ".");
    var rows = Array.prototype.slice.call(side.querySelectorAll("table.side tr"));
    function show() {
      boxes.forEach(function (box) {
        box.checked = chosen.indexOf(box.value) >= 0;
        box.disabled = !box.checked && chosen.length >= MAX;
      });
      rows.forEach(function (row) {
        row.querySelectorAll("[data-c]").forEach(function (cell) {
          cell.hidden = chosen.indexOf(cell.getAttribute("data-c")) < 0;
        });
        chosen.forEach(function (code) {
          var cell = row.querySelector('[data-c="' + code + '"]');
          if (cell) row.appendChild(cell);
        });
      });
      side.hidden = chosen.length === 0;
      var names = list(chosen.map(nameOf));
      var said;
      if (chosen.length === 0) said = "Choose " + MIN + " to " + MAX + " countries to see them side by side.";
      else if (chosen.length < MIN) said = "Showing " + names + ": choose at least one more country to compare with.";
      else said = "Showing " + names + " side by side" + (chosen.length >= MAX ? " (at most " + MAX + ")." : ".");
      status.textContent = notes.concat([said]).join(" ");
      var search = chosen.length ? "?c=" + chosen.join(",") : "";
      if (location.search !== search) history.replaceState(null, "", location.pathname + search + location.hash);
    }
    boxes.forEach(function (box) {
      box.addEventListener("change", function () {
        var at = chosen.indexOf(box.value);
        if (box.checked && at < 0 && chosen.length < MAX) chosen.push(box.value);
        if (!box.checked && at >= 0) chosen.splice(at, 1);
        notes = [];
        show();
      });
    });
    document.getElementById("compare-clear").addEventListener("click", function () {
      chosen = [];
      notes = [];
      show();
    });
    form.addEventListener("submit", function (event) {
      event.preventDefault();
    });
    choose.open = chosen.length < MIN;
    form.hidden = false;
    show();
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
