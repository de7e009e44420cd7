// The search box of every page, and the results of /search/. The index (/search-index.json, written by
// the build: {version, items: [{k: kind, t: title, u: url from the site's root, s: text}]}) is fetched
// from this site the first time the box is used, so the page works under a strict CSP. Without
// JavaScript the box submits to /search/, which lists everything A to Z.
// Also here, because every page loads this file: the "Countries" panel of the header closes on Escape or
// a click elsewhere, and the page's "last updated" time is shown in the reader's terms.
(function () {
  "use strict";
  // The site's root: this script is <root>assets/search.js, wherever the site is published.
  var root = new URL("../", document.currentScript.src);
  var index = null;
  var loading = null;
  var KINDS = { country: "Country", erp: "ERP", page: "Page", fact: "Fact" };
  var SNIPPET = 140; // the most characters of a result's text shown under its title
  var WEIGHT = { country: 400, erp: 350, page: 200, fact: 0 };

  // One character as the search compares it: lower case, without accents or other marks, and without
  // punctuation (so "VERI*FACTU" and "verifactu", "S/4HANA" and "s4hana", "Türkiye" and "turkiye" are the
  // same). A space stays a space: it separates words.
  function foldChar(c) {
    return fold(c);
  }

  // A whole text folded: the same as folding it character by character (Greek's final sigma, the one
  // letter lower-cased by its place in a word, is folded to the plain sigma), in one pass.
  function fold(text) {
    return String(text).toLowerCase().normalize("NFD").replace(/[^\p{L}\p{N}\s]/gu, "")
      .replace(/\s/g, " ").replace(/ς/g, "σ");
  }

  // A text folded character by character, with the place in the text each folded character comes from:
  // the index's texts and the query are folded alike, and a match in the folded text is highlighted at
  // its place in the text.
  function folded(text) {
    text = String(text);
    var out = "", origin = [];
    for (var i = 0; i < text.length; i++) {
      var one = foldChar(text[i]);
      out += one;
      for (var k = 0; k < one.length; k++) { origin.push(i); }
    }
    return { text: out, origin: origin };
  }

  // The words of a query, folded; a word that folds to nothing (punctuation only) is dropped.
  function queryWords(query) {
    return fold(query).split(/\s+/).filter(Boolean);
  }

  function load() {
    if (!loading) {
      loading = fetch(new URL("search-index.json", root).href)
        .then(function (r) {
          if (!r.ok) { throw new Error("HTTP " + r.status); }
          return r.json();
        })
        .then(function (data) {
          index = data.items.map(function (item, order) {
            return { item: item, order: order, title: fold(item.t), text: fold(item.s || "") };
          });
          return index;
        });
    }
    return loading;
  }

  // Where a word starts a word of a folded text (its start, or after a space), or -1.
  function wordStart(text, word) {
    for (var at = text.indexOf(word); at >= 0; at = text.indexOf(word, at + 1)) {
      if (at === 0 || text[at - 1] === " ") { return at; }
    }
    return -1;
  }

  // Every word must appear in the title or the text. Ranked by relevance: the more words the title (a
  // name) holds, the higher, so a name or title match always comes before a mention in the text; then a
  // title that is the query, or starts with it; then a word found at the start of a title's word; then
  // countries, ERPs and pages before facts; then the index's order.
  function search(query, limit) {
    var words = queryWords(query);
    if (!words.length || !index) { return []; }
    var whole = words.join(" ");
    var found = [];
    for (var i = 0; i < index.length; i++) {
      var entry = index[i];
      var inTitle = 0, starts = 0, ok = true;
      for (var w = 0; w < words.length; w++) {
        if (entry.title.indexOf(words[w]) >= 0) {
          inTitle++;
          if (wordStart(entry.title, words[w]) >= 0) { starts++; }
        } else if (entry.text.indexOf(words[w]) < 0) {
          ok = false;
          break;
        }
      }
      if (!ok) { continue; }
      var title = entry.title.replace(/\s+/g, " ").trim();
      var score = inTitle * 10000 + starts * 100 + (WEIGHT[entry.item.k] || 0);
      if (title === whole) { score += 3000; } else if (title.indexOf(whole) === 0) { score += 1500; }
      found.push({ entry: entry, score: score });
    }
    found.sort(function (a, b) { return b.score - a.score || a.entry.order - b.entry.order; });
    return found.slice(0, limit).map(function (f) { return f.entry.item; });
  }

  // A text with the words found in it marked (<mark>), as nodes: the folded words are looked for in the
  // folded text, and marked at their place in the text.
  function highlighted(text, words) {
    var f = folded(text);
    var marks = [];
    words.forEach(function (word) {
      for (var at = f.text.indexOf(word); at >= 0; at = f.text.indexOf(word, at + word.length)) {
        marks.push([f.origin[at], f.origin[at + word.length - 1] + 1]);
      }
    });
    marks.sort(function (a, b) { return a[0] - b[0] || b[1] - a[1]; });
    var fragment = document.createDocumentFragment();
    var done = 0;
    marks.forEach(function (m) {
      if (m[1] <= done) { return; }
      var from = Math.max(m[0], done);
      if (from > done) { fragment.appendChild(document.createTextNode(text.slice(done, from))); }
      fragment.appendChild(el("mark", "", text.slice(from, m[1])));
      done = m[1];
    });
    if (done < text.length) { fragment.appendChild(document.createTextNode(text.slice(done))); }
    return fragment;
  }

  function el(name, className, text) {
    var node = document.createElement(name);
    if (className) { node.className = className; }
    if (text !== undefined) { node.textContent = text; }
    return node;
  }

  // A short piece of the text around the first word that matched it, cut between words.
  function snippet(item, query) {
    var text = item.s || "";
    if (text.length <= SNIPPET) { return text; }
    // Folded character by character, so that a match in the folded text has its place in the text.
    var f = folded(text);
    var words = queryWords(query);
    var at = -1;
    for (var w = 0; w < words.length && at < 0; w++) { at = f.text.indexOf(words[w]); }
    var match = at < 0 ? 0 : f.origin[at];
    var isSpace = function (c) { return /\s/.test(c); };
    // Start at the beginning of the word 50 characters before the match, end after the last whole word
    // that fits.
    var start = Math.max(0, match - 50);
    while (start > 0 && !isSpace(text[start - 1])) { start--; }
    if (match - start > 80) { start = Math.max(0, match - 50); } // one very long word: cut it
    var end = Math.min(text.length, start + SNIPPET);
    if (end < text.length && !isSpace(text[end])) {
      var cut = end;
      while (cut > match && !isSpace(text[cut - 1])) { cut--; }
      if (cut > match) { end = cut; }
    }
    var piece = text.slice(start, end).trim();
    return (start > 0 ? "… " : "") + piece + (end < text.length ? " …" : "");
  }

  function resultLink(item, query) {
    var a = el("a", "result");
    a.href = new URL(item.u, root).href;
    var head = el("span", "result-head");
    var words = queryWords(query);
    var title = el("span", "result-title");
    title.appendChild(highlighted(item.t, words));
    head.appendChild(title);
    head.appendChild(el("span", "kind kind-" + item.k, KINDS[item.k] || item.k));
    a.appendChild(head);
    if (item.s) {
      var text = el("span", "result-text");
      text.appendChild(highlighted(snippet(item, query), words));
      a.appendChild(text);
    }
    return a;
  }

  function resultsUrl(query) {
    var url = new URL("search/", root);
    url.searchParams.set("q", query);
    return url.href;
  }

  // The header's box: results under it as the reader types, as the ARIA combobox pattern describes. The
  // input keeps the focus: the arrow keys move the active option (aria-activedescendant), Enter opens it,
  // Escape closes the list. The script adds the roles, so without it the box is a plain search field.
  function enhanceBox(form) {
    var input = form.querySelector("input[type=search]");
    if (!input) { return; }
    var popup = el("div", "search-popup");
    popup.hidden = true;
    var status = el("p", "search-status");
    status.setAttribute("role", "status");
    var list = el("div", "search-list");
    list.id = input.id + "-results";
    list.setAttribute("role", "listbox");
    list.setAttribute("aria-label", "Search results");
    popup.appendChild(status);
    popup.appendChild(list);
    form.appendChild(popup);
    input.setAttribute("role", "combobox");
    input.setAttribute("aria-autocomplete", "list");
    input.setAttribute("aria-controls", list.id);
    input.setAttribute("aria-expanded", "false");
    var timer = null;
    var active = -1;

    function options() {
      return Array.prototype.slice.call(list.querySelectorAll("[role=option]"));
    }

    function option(node, index) {
      node.id = input.id + "-option-" + index;
      node.setAttribute("role", "option");
      node.setAttribute("aria-selected", "false");
      node.tabIndex = -1;
      return node;
    }

    // The active option: marked, scrolled into the list's view and named by the input; -1 for none.
    function activate(index) {
      var all = options();
      active = index;
      all.forEach(function (node, i) {
        node.setAttribute("aria-selected", i === index ? "true" : "false");
        node.classList.toggle("active", i === index);
      });
      if (index >= 0 && all[index]) {
        input.setAttribute("aria-activedescendant", all[index].id);
        all[index].scrollIntoView({ block: "nearest" });
      } else {
        input.removeAttribute("aria-activedescendant");
      }
    }

    function close() {
      activate(-1);
      popup.hidden = true;
      input.setAttribute("aria-expanded", "false");
    }

    function open() {
      popup.hidden = false;
      input.setAttribute("aria-expanded", "true");
    }

    function draw() {
      var query = input.value.trim();
      if (!query) { close(); return; }
      load().then(function () {
        if (input.value.trim() !== query) { return; }
        var results = search(query, 8);
        activate(-1);
        list.textContent = "";
        results.forEach(function (item, i) {
          list.appendChild(option(resultLink(item, query), i));
        });
        var all = option(el("a", "search-all", "All results for “" + query + "”"), results.length);
        all.href = resultsUrl(query);
        list.appendChild(all);
        // Read out by screen readers; shown only when nothing was found.
        status.textContent = results.length
          ? results.length + (results.length === 1 ? " result" : " results") + ", then all results"
          : "Nothing found for “" + query + "”.";
        status.classList.toggle("vh", results.length > 0);
        open();
      }).catch(function () {
        status.classList.remove("vh");
        status.textContent = "The search index could not be loaded; press Enter for the A–Z index.";
        list.textContent = "";
        popup.hidden = false;
      });
    }

    input.addEventListener("focus", function () { load().catch(function () {}); });
    input.addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(draw, 60);
    });
    input.addEventListener("keydown", function (event) {
      var count = options().length;
      var shown = !popup.hidden && count > 0;
      if (event.key === "ArrowDown" || event.key === "ArrowUp") {
        event.preventDefault();
        if (!shown) { draw(); return; }
        if (event.key === "ArrowDown") {
          activate(active + 1 < count ? active + 1 : 0);
        } else {
          activate(active < 0 ? count - 1 : active - 1);
        }
      } else if (event.key === "Enter" && shown && active >= 0) {
        event.preventDefault();
        location.href = options()[active].href;
      } else if (event.key === "Escape" && !popup.hidden) {
        event.preventDefault();
        close();
      }
    });
    document.addEventListener("click", function (event) {
      if (!form.contains(event.target)) { close(); }
    });
    form.addEventListener("focusout", function (event) {
      if (event.relatedTarget && !form.contains(event.relatedTarget)) { close(); }
    });
  }

  // /search/: every result for ?q=, grouped by kind.
  function drawPage(box) {
    var query = new URLSearchParams(location.search).get("q") || "";
    var input = document.getElementById("page-q");
    if (input) { input.value = query; }
    if (!query.trim()) { return; }
    box.textContent = "Searching…";
    load().then(function () {
      var results = search(query, 200);
      box.textContent = "";
      var heading = el("h2", "", results.length
        ? results.length + (results.length === 1 ? " result" : " results") + " for “" + query + "”"
        : "Nothing found for “" + query + "”");
      heading.id = "results";
      box.appendChild(heading);
      ["country", "erp", "page", "fact"].forEach(function (kind) {
        var mine = results.filter(function (r) { return r.k === kind; });
        if (!mine.length) { return; }
        var ul = el("ul", "search-list");
        mine.forEach(function (item) {
          var li = el("li");
          li.appendChild(resultLink(item, query));
          ul.appendChild(li);
        });
        box.appendChild(el("h3", "", { country: "Countries", erp: "ERP products", page: "Pages", fact: "Facts" }[kind]));
        box.appendChild(ul);
      });
    }).catch(function () {
      box.textContent = "The search index could not be loaded; the A–Z index below lists everything.";
    });
  }

  function closeJumpPanels() {
    var panels = document.querySelectorAll("details.jump[open]");
    for (var i = 0; i < panels.length; i++) { panels[i].open = false; }
  }

  // 2026-11-23T19:14:10Z -> 2026-11-23 19:14 UTC
  function readableTimes() {
    var times = document.querySelectorAll("time.updated");
    for (var i = 0; i < times.length; i++) {
      var m = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2})/.exec(times[i].getAttribute("datetime") || "");
      if (m) { times[i].textContent = m[1] + " " + m[2] + " UTC"; }
    }
  }

  var forms = document.querySelectorAll("form.site-search");
  for (var f = 0; f < forms.length; f++) { enhanceBox(forms[f]); }
  var page = document.getElementById("search-page-results");
  if (page) { drawPage(page); }
  document.addEventListener("keydown", function (event) {
    if (event.key === "Escape") { closeJumpPanels(); }
  });
  document.addEventListener("click", function (event) {
    var panel = document.querySelector("details.jump[open]");
    if (panel && !panel.contains(event.target)) { panel.open = false; }
  });
  readableTimes();
})();
