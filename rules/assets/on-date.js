// The date control of the comparison page (/compare/), of each country page and of the home page: what
// applies on a chosen day, for the countries of the address (?c=pl,be,es; every country when none is
// chosen) or the page's own; on the home page (its form marked data-home) the map and the table of
// countries are shown as they stand on that day, in place. The address keeps the day (?on=2027-01-01),
// so a link shares the view. The answers are the site's own: /api/v1/on/index.json lists the days answered
// (the answer on any day is the one of the latest listed day on or before it) and /api/v1/on/<day>.json
// gives every country's toggles and phases on it; this script does no date arithmetic of its own. The table
// is built with text nodes only. Without this script the page shows the reference date and the next changes.
"use strict";
(function () {
  // The site's root: this script is <root>assets/on-date.js, wherever the site is published.
  var root = new URL("../", document.currentScript.src);
  var DAY = /^\d{4}-\d{2}-\d{2}$/;

  function address(href) {
    return href.charAt(0) === "/" ? root.pathname + href.slice(1) : href;
  }
  function element(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }
  function getJson(path) {
    return fetch(new URL(path.replace(/^\//, ""), root).href).then(function (r) {
      if (!r.ok) throw new Error("HTTP " + r.status);
      return r.json();
    });
  }
  function list(words) {
    if (words.length < 2) return words.join("");
    return words.slice(0, -1).join(", ") + " and " + words[words.length - 1];
  }
  // The codes of the address, in order, each once.
  function chosenCodes() {
    var codes = [];
    new URLSearchParams(location.search).getAll("c").forEach(function (value) {
      value.split(",").forEach(function (code) {
        code = code.trim().toLowerCase();
        if (code && codes.indexOf(code) < 0) codes.push(code);
      });
    });
    return codes;
  }
  var WORD = { "true": "yes", "false": "no", "null": "unknown" };

  // The home page's map and table of countries on a day. A cell (and a country's colour on the map) whose
  // toggle has the value and the reason (the phase that sets it) of the reference date keeps what the page
  // was built with (its limit, its absence check); any other shows the day's value in a word. Each part is
  // put back as built on the reference date.
  function homePainter() {
    var table = document.querySelector("table.toggles-table");
    var columns = table ? Array.prototype.map.call(table.querySelectorAll("thead th"), function (th) {
      return th.getAttribute("data-toggle");
    }) : [];
    var countries = document.querySelectorAll("svg.fig-map a.country");
    // The map's toggles by their index N (its classes tN-true, tN-qualified, its legend .map-legend-tN).
    var mapToggles = Array.prototype.map.call(document.querySelectorAll("input[name='map-toggle'][id^='map-t']"), function (input) {
      return { index: input.id.slice(5), name: input.value, label: input.labels[0].textContent };
    });
    var desc = document.getElementById("map-desc");
    var tableStatus = document.getElementById("on-table-status");
    var built = new Map();
    function keepBuilt(node, what) {
      if (!built.has(node)) built.set(node, what(node));
      return built.get(node);
    }
    function byCode(answer) {
      var out = {};
      answer.countries.forEach(function (c) {
        out[c.code] = c;
      });
      return out;
    }
    function reason(c, name) {
      var found = null;
      c.reasons.forEach(function (r) {
        if (r.toggle === name) found = r.phase_id;
      });
      return found;
    }
    // The code of a country's link (its page is <root><code>/).
    function codeOf(href) {
      var parts = href.split("/").filter(Boolean);
      return parts[parts.length - 1];
    }
    function paint(answer, referenceAnswer, day, reference) {
      var on = byCode(answer);
      var then = byCode(referenceAnswer);
      function same(code, name) {
        var c = on[code];
        var r = then[code];
        return !c || !r || (c.toggles[name] === r.toggles[name] && reason(c, name) === reason(r, name));
      }
      if (table) {
        table.querySelectorAll("tbody tr[data-c]").forEach(function (tr) {
          var code = tr.getAttribute("data-c");
          Array.prototype.forEach.call(tr.cells, function (td, i) {
            var name = columns[i];
            if (!name) return;
            var was = keepBuilt(td, function (node) {
              return { className: node.className, html: node.innerHTML };
            });
            if (same(code, name)) {
              td.className = was.className;
              td.innerHTML = was.html;
            } else {
              var word = WORD[String(on[code].toggles[name])];
              td.className = word;
              td.textContent = word;
            }
          });
        });
      }
      var counts = {};
      mapToggles.forEach(function (t) {
        counts[t.index] = { yes: 0, limited: 0, no: 0, unknown: 0 };
      });
      countries.forEach(function (link) {
        var code = codeOf(link.getAttribute("href"));
        var was = keepBuilt(link, function (node) {
          return { className: node.getAttribute("class"), title: node.querySelector("title").textContent };
        });
        var classes = was.className.split(" ");
        var lines = was.title.split("\n");
        mapToggles.forEach(function (t, i) {
          var prefix = "t" + t.index + "-";
          var value;
          if (same(code, t.name)) {
            value = classes.indexOf(prefix + "true") >= 0 ? (classes.indexOf(prefix + "qualified") >= 0 ? "limited" : "yes") : classes.indexOf(prefix + "false") >= 0 ? "no" : "unknown";
          } else {
            var v = on[code].toggles[t.name];
            classes = classes.filter(function (c) {
              return c.indexOf(prefix) !== 0;
            }).concat([prefix + String(v === null ? "unknown" : v)]);
            value = WORD[String(v)];
            lines[i + 1] = lines[i + 1].split(": ")[0] + ": " + value;
          }
          counts[t.index][value] += 1;
        });
        link.setAttribute("class", classes.join(" "));
        link.querySelector("title").textContent = lines.join("\n");
      });
      // The legends' counts, and the map's description, which says them too.
      var words = [];
      mapToggles.forEach(function (t) {
        var n = counts[t.index];
        document.querySelectorAll(".map-legend-t" + t.index + " [data-count]").forEach(function (span) {
          span.textContent = String(n[span.getAttribute("data-count")]);
        });
        words.push(t.label + ": " + (n.yes + n.limited) + " yes" + (n.limited ? " (" + n.limited + " of them limited)" : "") + ", " + n.no + " no, " + n.unknown + " unknown.");
      });
      if (desc) {
        var text = keepBuilt(desc, function (node) {
          return node.textContent;
        });
        // The counts follow the drawing's sentences, from the first toggle's label on.
        var cut = mapToggles.length ? text.indexOf(mapToggles[0].label + ": ") : -1;
        desc.textContent = day === reference ? text : (cut >= 0 ? text.slice(0, cut) : text + " ") + "On " + day + ": " + words.join(" ");
      }
      if (tableStatus) {
        tableStatus.hidden = day === reference;
        tableStatus.textContent = "Shown as they stand on " + day + " (chosen above the map); an answer that changed since " + reference + " is in a word, without its limit or basis.";
      }
    }
    function words(day, reference, since) {
      return "The map and the table of countries show what applies on " + day + "." + (since !== day ? " The answers are the same every day from " + since + "." : "") +
        (day !== reference ? " The map's e-invoicing model stays that of " + reference + "." : "");
    }
    return { paint: paint, words: words };
  }

  function start() {
    var form = document.getElementById("on-form");
    var input = document.getElementById("on-day");
    var result = document.getElementById("on-result");
    var status = document.getElementById("on-status");
    var home = form && form.hasAttribute("data-home") ? homePainter() : null;
    if (!form || !input || !(result || home)) return;
    var reference = input.getAttribute("data-reference");
    var toggles = Array.prototype.slice.call(document.querySelectorAll("#on-toggles li")).map(function (li) {
      return { name: li.getAttribute("data-name"), label: li.textContent };
    });
    var index = null;
    var days = {};
    function load(path) {
      if (!days[path]) {
        days[path] = getJson(path).catch(function (error) {
          delete days[path];
          throw error;
        });
      }
      return days[path];
    }
    // The address with the day set (none for the reference date), the other parameters kept as written.
    function keep(day) {
      var parts = location.search.replace(/^\?/, "").split("&").filter(function (part) {
        return part && part.indexOf("on=") !== 0;
      });
      if (day !== reference) parts.push("on=" + day);
      var search = parts.length ? "?" + parts.join("&") : "";
      if (location.search !== search) history.replaceState(null, "", location.pathname + search + location.hash);
    }
    function draw(answer, day, codes) {
      var byCode = {};
      answer.countries.forEach(function (c) {
        byCode[c.code] = c;
      });
      var shown = codes.filter(function (code) {
        return byCode[code];
      }).map(function (code) {
        return byCode[code];
      });
      if (!shown.length) shown = answer.countries;
      result.textContent = "";
      var wrap = element("div", "table-wrap");
      wrap.setAttribute("role", "region");
      wrap.tabIndex = 0;
      wrap.setAttribute("aria-labelledby", "on-caption");
      var table = element("table", "on-table");
      table.setAttribute("data-day", day);
      var caption = element(heading, "", "What applies on " + day + (shown.length < answer.countries.length ? ": " + list(shown.map(function (c) {
        return c.name;
      })) : ", every country"));
      caption.id = "on-caption";
      result.appendChild(caption);
      var thead = element("thead");
      var head = element("tr");
      var first = element("th", "", "Country");
      first.scope = "col";
      head.appendChild(first);
      toggles.forEach(function (t) {
        var th = element("th", "", t.label);
        th.scope = "col";
        head.appendChild(th);
      });
      var last = element("th", "", "Obligation phases that day");
      last.scope = "col";
      head.appendChild(last);
      thead.appendChild(head);
      table.appendChild(thead);
      var tbody = element("tbody");
      shown.forEach(function (c) {
        var tr = element("tr");
        tr.setAttribute("data-c", c.code);
        var th = element("th");
        th.scope = "row";
        var a = element("a", "", c.name);
        a.href = address("/" + c.code + "/");
        th.appendChild(a);
        tr.appendChild(th);
        toggles.forEach(function (t) {
          var value = c.toggles[t.name];
          var word = WORD[String(value)];
          var td = element("td", "on-toggle " + word, word);
          td.setAttribute("data-toggle", t.name);
          td.setAttribute("data-value", String(value));
          td.setAttribute("data-label", t.label);
          tr.appendChild(td);
        });
        var phases = element("td", "text");
        phases.setAttribute("data-label", "Obligation phases that day");
        var ul = element("ul", "on-phases");
        c.phases.forEach(function (p) {
          var li = element("li", "on-phase " + p.state);
          li.setAttribute("data-phase", p.id);
          li.setAttribute("data-state", p.state);
          var link = element("a", "", p.obligation_label + (p.phase_label ? ", " + p.phase_label : ""));
          link.href = address("/" + c.code + "/#" + p.id);
          li.appendChild(link);
          li.appendChild(document.createTextNode(": " + p.words));
          ul.appendChild(li);
        });
        phases.appendChild(ul);
        tr.appendChild(phases);
        tbody.appendChild(tr);
      });
      table.appendChild(tbody);
      wrap.appendChild(table);
      result.appendChild(wrap);
      result.hidden = false;
      return shown;
    }
    var turn = 0;
    // A country page shows its own country; the comparison page the countries of its address.
    var own = result && result.getAttribute("data-country");
    var heading = (result && result.getAttribute("data-heading")) || "h3";
    function show(day, notes) {
      var mine = ++turn;
      var codes = own ? [own] : chosenCodes();
      keep(day);
      if (result) result.setAttribute("aria-busy", "true");
      status.textContent = notes.concat(["Loading what applies on " + day + "…"]).join(" ");
      (index ? Promise.resolve(index) : getJson("/api/v1/on/index.json"))
        .then(function (got) {
          index = got;
          // The latest listed day on or before the chosen one holds its answer.
          var entry = null;
          got.data.forEach(function (e) {
            if (e.date <= day) entry = e;
          });
          if (!entry) throw new Error("no answer listed for " + day);
          // The home page keeps the reference date's cells where nothing changed since: it loads that day too.
          return Promise.all([load("/api/v1/on/" + entry.date + ".json"), home ? load("/api/v1/on/" + reference + ".json") : null]);
        })
        .then(function (answers) {
          if (mine !== turn) return;
          var answer = answers[0];
          if (home) {
            home.paint(answer.data, answers[1].data, day, reference);
            status.textContent = notes.concat([home.words(day, reference, answer.data.same_since)]).join(" ");
            return;
          }
          var shown = draw(answer.data, day, codes);
          result.removeAttribute("aria-busy");
          var since = answer.data.same_since;
          status.textContent = notes.concat([
            "Showing what applies on " + day + " for " + (shown.length === answer.data.countries.length ? "every country" : list(shown.map(function (c) {
              return c.name;
            }))) + "." + (since !== day ? " The answers are the same every day from " + since + "." : "")
          ]).join(" ");
        })
        .catch(function (error) {
          if (mine !== turn) return;
          if (result) result.removeAttribute("aria-busy");
          status.textContent = notes.concat(["Could not load the answers for " + day + " (" + String(error.message || error) + "); choose the day again to retry."]).join(" ");
        });
    }
    // A day as the address or the control gives it: before the reference date it is not answered.
    function choose(day) {
      if (!DAY.test(day || "")) {
        input.value = reference;
        show(reference, day ? ["Not a day (YYYY-MM-DD): " + day + ", so showing " + reference + "."] : []);
      } else if (day < reference) {
        input.value = reference;
        show(reference, ["Days before the reference date " + reference + " are not answered (the phases record when an obligation starts, not how it stood before), so showing " + reference + "."]);
      } else {
        input.value = day;
        show(day, []);
      }
    }
    input.addEventListener("change", function () {
      if (input.value) choose(input.value);
    });
    document.getElementById("on-reset").addEventListener("click", function () {
      choose(reference);
    });
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      choose(input.value);
    });
    // The comparison's choice of countries (/assets/compare.js updates the address first).
    var compare = document.getElementById("compare-form");
    if (compare) {
      compare.addEventListener("change", function () {
        choose(input.value);
      });
      compare.addEventListener("click", function (event) {
        if (event.target && event.target.id === "compare-clear") choose(input.value);
      });
    }
    form.hidden = false;
    choose(new URLSearchParams(location.search).get("on") || reference);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
