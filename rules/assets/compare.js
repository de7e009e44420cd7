// The comparison page (/compare/): two to four countries side by side. The address keeps the choice
// (?c=it,pl; ?c=it&c=pl, as a form sends it, is read too), so a link shares it. The page holds the rows of
// the side-by-side tables (each keyed by data-key); each chosen country's column is fetched from this site
// (/compare/<code>.json, each cell in words and links, keyed by its row) and built here with text nodes
// only. Without this script the page is the table of every country.
"use strict";
(function () {
  var MAX = 4;
  var MIN = 2;
  // The site's root: this script is <root>assets/compare.js, wherever the site is published.
  var root = new URL("../", document.currentScript.src);

  // A link of the site's data (from the site's root, "/it/#x") under the root; a source's own address
  // as it is.
  function address(href) {
    return href.charAt(0) === "/" ? root.pathname + href.slice(1) : href;
  }
  function element(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }
  function link(href, text) {
    var a = element("a", "", text);
    a.href = address(href);
    return a;
  }
  // A grade as the pages say it, then the sources: "verified (official), page read, checked …; source: …".
  function grade(g, sources) {
    var span = element("span", "grade");
    span.appendChild(element("span", g.class, g.text));
    if (g.evidence) {
      span.appendChild(document.createTextNode(", "));
      span.appendChild(element("span", "evidence", g.evidence));
    }
    if (g.checked) {
      span.appendChild(document.createTextNode(", "));
      span.appendChild(element("span", "date", "checked " + g.checked));
    }
    span.appendChild(document.createTextNode("; source: "));
    if (!sources.length) span.appendChild(document.createTextNode("none"));
    // Each host once, as the pages name it ("ec.europa.eu (2, 3)"): a host's further pages are named
    // "<host> (2)" in the column, and shown by their number.
    var hosts = [];
    var pages = {};
    sources.forEach(function (s) {
      var host = s.name.replace(/ \(\d+\)$/, "");
      if (!pages[host]) {
        pages[host] = [];
        hosts.push(host);
      }
      pages[host].push(s);
    });
    hosts.forEach(function (host, i) {
      if (i) span.appendChild(document.createTextNode(", "));
      span.appendChild(link(pages[host][0].url, host));
      var more = pages[host].slice(1);
      if (!more.length) return;
      span.appendChild(document.createTextNode(" ("));
      more.forEach(function (s, j) {
        if (j) span.appendChild(document.createTextNode(", "));
        var a = link(s.url, String(j + 2));
        a.setAttribute("aria-label", host + ", page " + (j + 2));
        span.appendChild(a);
      });
      span.appendChild(document.createTextNode(")"));
    });
    return span;
  }
  // The sentence an answer rests on, one click away: "The source says: “…” (source)", as the pages say it.
  function said(s) {
    var details = element("details", "said-more");
    details.appendChild(element("summary", "", "Quote"));
    var span = element("span", "said", "The source says: ");
    span.appendChild(element("q", "", s.quote));
    if (s.source) {
      span.appendChild(document.createTextNode(" ("));
      span.appendChild(link(s.source.url, s.source.name));
      span.appendChild(document.createTextNode(")"));
    }
    details.appendChild(span);
    return details;
  }
  // The cell of a row of each table, from a column's entry for that row (none: unknown).
  var CELLS = {
    obligations: function (td, cell) {
      var phases = cell ? cell.phases : [];
      if (!phases.length) td.appendChild(element("span", "unknown", "unknown: no phase recorded"));
      phases.forEach(function (p) {
        var span = element("span", "phase");
        if (p.phase) span.appendChild(document.createTextNode(p.phase + ": "));
        span.appendChild(link(p.href, p.words));
        if (p.limit) span.appendChild(element("span", "limit", ": " + p.limit));
        if (p.absence) span.appendChild(element("span", "basis", " (absence check)"));
        span.appendChild(grade(p.grade, p.sources));
        td.appendChild(span);
        if (p.said) td.appendChild(said(p.said));
      });
    },
    questions: function (td, cell) {
      var answers = cell ? cell.answers : [];
      if (!answers.length) {
        td.classList.add("unknown");
        td.appendChild(document.createTextNode("unknown. "));
        td.appendChild(element("span", "note", cell ? cell.looked_at : ""));
      }
      answers.forEach(function (e) {
        var span = element("span", "phase", (e.current ? "" : "Still to come: ") + e.text + " (");
        e.obligations.forEach(function (o, i) {
          if (i) span.appendChild(document.createTextNode(", "));
          span.appendChild(link(o.href, o.text));
        });
        span.appendChild(document.createTextNode(")"));
        span.appendChild(grade(e.grade, e.sources));
        td.appendChild(span);
        e.said.forEach(function (s) {
          td.appendChild(said(s));
        });
      });
      if (cell && cell.note) td.appendChild(element("span", "note", cell.note));
    },
    erps: function (td, cell) {
      if (!cell) {
        td.classList.add("unknown");
        td.textContent = "unknown";
        return;
      }
      td.classList.add(cell.class);
      td.appendChild(link(cell.href, cell.support));
      if (cell.grade) td.appendChild(grade(cell.grade, cell.sources));
      if (cell.said) td.appendChild(said(cell.said));
    }
  };

  // The chooser's filter: as the reader types, a country stays in the list when its name holds what is
  // typed, or one of its other names (its <li data-terms>: the code, the aliases register's names)
  // starts with it; case and accents folded. The choice of a country hidden by the filter is kept.
  function filterList(input, list, count) {
    var items = Array.prototype.slice.call(list.children);
    function fold(text) {
      return text.normalize("NFD").replace(/[\u0300-\u036f]/g, "").toLowerCase().trim();
    }
    var names = items.map(function (li) {
      return fold(li.querySelector("label").textContent);
    });
    var terms = items.map(function (li) {
      return (li.getAttribute("data-terms") || "").split("|").map(fold);
    });
    function update() {
      var typed = fold(input.value);
      var shown = 0;
      items.forEach(function (li, i) {
        var hit = !typed || names[i].indexOf(typed) >= 0 || terms[i].some(function (t) {
          return t && t.indexOf(typed) === 0;
        });
        li.hidden = !hit;
        if (hit) shown += 1;
      });
      count.textContent = typed ? shown + " of " + items.length + " countries" : "";
    }
    input.addEventListener("input", update);
    // Enter in the box is no submission, and its change is no change of the choice.
    input.addEventListener("keydown", function (event) {
      if (event.key === "Enter") event.preventDefault();
    });
    input.addEventListener("change", function (event) {
      event.stopPropagation();
    });
    update();
  }
  function start() {
    var form = document.getElementById("compare-form");
    var side = document.getElementById("side");
    if (!form || !side) return;
    var status = document.getElementById("compare-status");
    var choose = document.getElementById("compare-choose");
    var tables = Array.prototype.slice.call(side.querySelectorAll("table.side[data-rows]"));
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

    // Each country's column, fetched once (a failed fetch is tried again on the next change).
    var columns = {};
    function load(code) {
      if (!columns[code]) {
        columns[code] = fetch(new URL("compare/" + code + ".json", root).href)
          .then(function (r) {
            if (!r.ok) throw new Error("HTTP " + r.status);
            return r.json();
          })
          .catch(function (error) {
            delete columns[code];
            return { code: code, failed: String(error.message || error) };
          });
      }
      return columns[code];
    }
    // The tables with the columns given, in their order: a heading and a cell in each row.
    function draw(shown) {
      tables.forEach(function (table) {
        Array.prototype.slice.call(table.querySelectorAll("[data-c]")).forEach(function (cell) {
          cell.parentNode.removeChild(cell);
        });
        var rows = table.getAttribute("data-rows");
        var head = table.querySelector("thead tr");
        shown.forEach(function (column) {
          var th = element("th");
          th.scope = "col";
          th.setAttribute("data-c", column.code);
          th.appendChild(link(column.href + "#" + table.getAttribute("data-anchor"), column.name));
          head.appendChild(th);
          var byKey = {};
          column[rows].forEach(function (cell) {
            byKey[cell.key] = cell;
          });
          table.querySelectorAll("tbody tr[data-key]").forEach(function (row) {
            var td = element("td", "text answer");
            td.setAttribute("data-c", column.code);
            td.setAttribute("data-label", column.name);
            CELLS[rows](td, byKey[row.getAttribute("data-key")]);
            row.appendChild(td);
          });
        });
      });
    }
    var turn = 0;
    function show() {
      boxes.forEach(function (box) {
        box.checked = chosen.indexOf(box.value) >= 0;
        box.disabled = !box.checked && chosen.length >= MAX;
      });
      var names = list(chosen.map(nameOf));
      var said;
      if (chosen.length === 0) said = "Choose " + MIN + " to " + MAX + " countries to see them side by side.";
      else if (chosen.length < MIN) said = "Showing " + names + ": choose at least one more country to compare with.";
      else said = "Showing " + names + " side by side" + (chosen.length >= MAX ? " (at most " + MAX + ")." : ".");
      var search = chosen.length ? "?c=" + chosen.join(",") : "";
      // The day of the date control (/assets/on-date.js) stays in the address.
      var day = new URLSearchParams(location.search).get("on");
      if (day) search += (search ? "&" : "?") + "on=" + encodeURIComponent(day);
      if (location.search !== search) history.replaceState(null, "", location.pathname + search + location.hash);
      var mine = ++turn;
      var wanted = chosen.slice();
      side.setAttribute("aria-busy", "true");
      status.textContent = notes.concat([wanted.length ? "Loading " + names + "…" : said]).join(" ");
      Promise.all(wanted.map(load)).then(function (got) {
        if (mine !== turn) return;
        var shown = got.filter(function (column) {
          return !column.failed;
        });
        var failed = got.filter(function (column) {
          return column.failed;
        });
        draw(shown);
        side.hidden = shown.length === 0;
        side.setAttribute("data-shown", shown.map(function (column) {
          return column.code;
        }).join(","));
        side.removeAttribute("aria-busy");
        var words = notes.concat([said]);
        if (failed.length) {
          words.push("Could not load the column of " + list(failed.map(function (column) {
            return nameOf(column.code) + " (" + column.failed + ")";
          })) + "; change the choice or reload the page to try again.");
        }
        status.textContent = words.join(" ");
      });
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
    filterList(document.getElementById("compare-filter"), document.getElementById("compare-countries"), document.getElementById("compare-filter-count"));
    choose.open = chosen.length < MIN;
    form.hidden = false;
    show();
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
