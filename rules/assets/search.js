// The search box of every page, and the results of /search/. The index (/search-index.json, written by
// the build: {version, items: [{k: kind, t: title, u: url from the site's root, s: text, a: a country's
// other names}]}, one item per line, the names of countries, ERPs and pages before the facts) is fetched
// from this site the first time the box is used, with the search library (/assets/minisearch.js,
// MiniSearch), so the page works under a strict CSP. The index is read as it arrives: the names can be
// found before the facts have come. Without JavaScript the box submits to /search/, which lists
// everything A to Z.
// Also here, because every page loads this file: the "Countries" panel of the header closes on Escape (the
// focus back on its opener) or a click elsewhere, and the page's "last updated" time is shown in the reader's terms.
(function () {
  "use strict";
  // The site's root: this script is <root>assets/search.js, wherever the site is published.
  var root = new URL("../", document.currentScript.src);
  var items = [];        // the index's items as they arrived; an item's id is its place here
  var engine = null;     // the MiniSearch index of the items arrived so far
  var complete = false;  // whether every item has arrived
  var loading = null;    // resolves once the library and the first items are in
  var finished = null;   // resolves once every item is in
  var listeners = [];    // called when the last items are in
  var KINDS = { country: "Country", erp: "ERP", page: "Page", fact: "Fact" };
  var SNIPPET = 140; // the most characters of a result's text shown under its title
  var WEIGHT = { country: 3, erp: 2, page: 1, fact: 0 };

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

  // The words of an indexed text: each word folded whole ("e-invoicing" is "einvoicing", as a query
  // writes it either way), and the parts of a word that punctuation joins as words of their own
  // ("reverse-charge" is found by "reverse charge").
  function textWords(text) {
    var out = [];
    String(text).split(/\s+/).forEach(function (word) {
      var whole = fold(word);
      if (!whole) { return; }
      out.push(whole);
      var parts = fold(word.replace(/[^\p{L}\p{N}]+/gu, " ")).split(" ").filter(Boolean);
      if (parts.length > 1) { out.push.apply(out, parts); }
    });
    return out;
  }

  function same(term) { return term; }

  function newEngine() {
    return new window.MiniSearch({
      fields: ["t", "a", "s"],
      extractField: function (item, field) {
        var value = item[field];
        return Array.isArray(value) ? value.join("   ") : (value || "");
      },
      tokenize: textWords,
      processTerm: same,
      // Relevance: a fact that names a word more often ranks higher. Two changes from the library's defaults
      // ("peppol" listed Japan's "Peppol-based … is optional" before Belgium's Peppol mandate): a word found
      // only as the start of a longer one counts for little (prefix 0.1, not 0.375: "peppol-based" is
      // indexed whole as well as in parts, so its text matched "peppol" twice), and a text's length for
      // less (BM25's b 0.3, not 0.7). Prefixes still find a word as the reader types it.
      searchOptions: {
        tokenize: queryWords, processTerm: same, boost: { t: 3, a: 3 }, prefix: true,
        weights: { fuzzy: 0.45, prefix: 0.1 }, bm25: { k: 1.2, b: 0.3, d: 0.5 }
      }
    });
  }

  // The library, loaded from this site as a script of its own (the policy allows the site's scripts).
  function library() {
    if (window.MiniSearch) { return Promise.resolve(); }
    return new Promise(function (resolve, reject) {
      var script = document.createElement("script");
      script.src = new URL("assets/minisearch.js", root).href;
      script.onload = function () { resolve(); };
      script.onerror = function () { reject(new Error("the search library did not load")); };
      document.head.appendChild(script);
    });
  }

  // The index's lines as they arrive: onLines(lines) for each run of whole lines.
  function readLines(response, onLines) {
    if (!response.body || !window.TextDecoder) {
      return response.text().then(function (text) { onLines(text.split("\n")); });
    }
    var reader = response.body.getReader();
    var decoder = new TextDecoder();
    var rest = "";
    function pump() {
      return reader.read().then(function (chunk) {
        if (chunk.done) {
          onLines((rest + decoder.decode()).split("\n"));
          return;
        }
        rest += decoder.decode(chunk.value, { stream: true });
        var end = rest.lastIndexOf("\n");
        if (end >= 0) {
          onLines(rest.slice(0, end).split("\n"));
          rest = rest.slice(end + 1);
        }
        return pump();
      });
    }
    return pump();
  }

  function load() {
    if (!loading) {
      var arrived = [];  // items read before the library is in
      var first;
      var firstItems = new Promise(function (resolve) { first = resolve; });
      var add = function () {
        if (!engine || !arrived.length) { return; }
        engine.addAll(arrived);
        arrived = [];
        first();
      };
      var lib = library().then(function () { engine = newEngine(); add(); });
      var index = fetch(new URL("search-index.json", root).href).then(function (r) {
        if (!r.ok) { throw new Error("HTTP " + r.status); }
        return readLines(r, function (lines) {
          lines.forEach(function (line) {
            line = line.trim().replace(/,$/, "");
            if (line.charAt(0) !== "{" || line.indexOf("{\"version\"") === 0) { return; }
            var item = JSON.parse(line);
            item.id = items.length;
            items.push(item);
            arrived.push(item);
          });
          add();
        });
      });
      finished = Promise.all([lib, index]).then(function () {
        add();
        first();
        complete = true;
        listeners.forEach(function (listener) { listener(); });
      });
      loading = Promise.race([Promise.all([lib, firstItems]), finished]);
    }
    return loading;
  }

  // Calls back once every item is in (at once if they are).
  function whenComplete(callback) {
    if (complete) { callback(); } else { listeners.push(callback); }
  }

  // How well each query word is found: a word found in no term, neither whole nor as a term's start, is
  // looked for with one typo (a word of four letters or more), else two (six letters or more), the
  // nearest that finds something.
  function typoAllowance(words) {
    var allowed = {};
    words.forEach(function (word) {
      var found = function (typos) {
        return engine.search(word, { fuzzy: typos, prefix: !typos }).length > 0;
      };
      allowed[word] = found(0) || word.length < 4 ? 0
        : (word.length < 6 || found(1) ? 1 : 2);
    });
    return function (term) { return allowed[term] || false; };
  }

  // The query words a term of a result was found by: the words it is or starts with, else (a typo) none.
  function wordsOf(term, words) {
    return words.filter(function (word) { return term.indexOf(word) === 0; });
  }

  // Whether a result's name is named by the query: each word of the country's name or of one of its
  // other names (an ERP: the first word of its name, its vendor) is a term the query found in the name.
  // Its strength: 3 when the query has each word as it is, 2 when it starts each, 1 with typos.
  function named(result, words) {
    var item = items[result.id];
    if (item.k !== "country" && item.k !== "erp") { return 0; }
    var inName = function (term) {
      var fields = result.match[term];
      return !!fields && (fields.indexOf("t") >= 0 || fields.indexOf("a") >= 0);
    };
    var names = item.k === "erp" ? [[queryWords(item.t)[0]]]
      : [item.t].concat(item.a || []).map(queryWords);
    var best = 0;
    names.forEach(function (name) {
      if (!name.length || !name.every(inName)) { return; }
      var exact = name.every(function (w) { return words.indexOf(w) >= 0; });
      var started = name.every(function (w) { return wordsOf(w, words).length > 0; });
      best = Math.max(best, exact ? 3 : (started ? 2 : 1));
    });
    return best;
  }

  // The query words a result has in its title or other names.
  function titleWords(result, words) {
    var found = {};
    Object.keys(result.match).forEach(function (term) {
      var fields = result.match[term];
      if (fields.indexOf("t") < 0 && fields.indexOf("a") < 0) { return; }
      wordsOf(term, words).forEach(function (w) { found[w] = true; });
    });
    return Object.keys(found).length;
  }

  // The words to mark in a result: the query words that start its terms, and the terms found with a typo.
  function markWords(result, words) {
    var marks = [];
    Object.keys(result.match).forEach(function (term) {
      var by = wordsOf(term, words);
      (by.length ? by : [term]).forEach(function (w) { if (marks.indexOf(w) < 0) { marks.push(w); } });
    });
    return marks;
  }

  // Results of a query, best first, each {item, marks, names: the other names it was found by}. Every
  // word must be found (whole, as a term's start or, for a word found nowhere, with a typo) in a result's
  // title, other names or text, except that a country or an ERP the query names comes first even when the
  // other words are not about it ("e-invoicing poland": Poland, then its facts). Then by relevance: the
  // more words in the title, the higher; among titles that hold words, countries, ERPs and pages before
  // facts; then the library's score (BM25, the title and names weighing three times the text).
  function search(query, limit) {
    var words = queryWords(query);
    if (!words.length || !engine) { return []; }
    var fuzzy = typoAllowance(words);
    var ranked = {};
    var entities = engine.search(query, {
      fields: ["t", "a"], combineWith: "OR", fuzzy: fuzzy,
      filter: function (r) { var k = items[r.id].k; return k === "country" || k === "erp"; }
    });
    // Of the countries and ERPs named, those that have the most words of the query in their names ("united
    // k": the United Kingdom, not Kosovo).
    entities = entities.filter(function (r) { return named(r, words) > 0; });
    var most = Math.max.apply(null, [0].concat(entities.map(function (r) { return titleWords(r, words); })));
    entities.forEach(function (r) {
      if (titleWords(r, words) === most) { ranked[r.id] = { result: r, tier: 10 + named(r, words) }; }
    });
    engine.search(query, { combineWith: "AND", fuzzy: fuzzy }).forEach(function (r) {
      if (!ranked[r.id]) { ranked[r.id] = { result: r, tier: 0 }; }
    });
    var found = Object.keys(ranked).map(function (id) {
      var entry = ranked[id];
      var item = items[entry.result.id];
      return {
        item: item, tier: entry.tier, inTitle: titleWords(entry.result, words),
        weight: WEIGHT[item.k] || 0, score: entry.result.score, marks: markWords(entry.result, words),
        // The other names it was found by, but its code, which its text says already.
        names: (item.a || []).filter(function (name) {
          return queryWords(item.s || "").indexOf(fold(name)) < 0 && queryWords(name).some(function (w) {
            return (entry.result.match[w] || []).indexOf("a") >= 0;
          });
        })
      };
    });
    found.sort(function (a, b) {
      return b.tier - a.tier || b.inTitle - a.inTitle || (b.inTitle && b.weight - a.weight)
        || b.score - a.score || a.item.id - b.item.id;
    });
    return found.slice(0, limit);
  }

  // Words near those of a query that found nothing, as the library suggests them (typos allowed more
  // widely), for "Nothing found; did you mean …?".
  function suggestions(query) {
    if (!engine) { return []; }
    return engine.autoSuggest(query, { fuzzy: 0.4, prefix: true, combineWith: "OR" })
      .slice(0, 3).map(function (s) { return s.suggestion; });
  }

  // Whether a folded match at `at` starts a word of the text (its start, or after a character that is
  // not a letter or a digit).
  function startsWord(text, f, at) {
    var i = f.origin[at];
    return i === 0 || !/[\p{L}\p{N}]/u.test(text[i - 1]);
  }

  // A text with the words found in it marked (<mark>), as nodes: the folded words are looked for in the
  // folded text where they start a word, and marked at their place in the text.
  function highlighted(text, words) {
    var f = folded(text);
    var marks = [];
    words.forEach(function (word) {
      for (var at = f.text.indexOf(word); at >= 0; at = f.text.indexOf(word, at + word.length)) {
        if (startsWord(text, f, at)) { marks.push([f.origin[at], f.origin[at + word.length - 1] + 1]); }
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

  // A short piece of a text around the first word that matched it, cut between words.
  function snippet(text, words) {
    if (text.length <= SNIPPET) { return text; }
    // Folded character by character, so that a match in the folded text has its place in the text.
    var f = folded(text);
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

  // A result as a link: its title and kind, and its text cut around the words found (a country found by
  // another of its names says which: "Europe · GB · also UK").
  function resultLink(found) {
    var item = found.item;
    var a = el("a", "result");
    a.href = new URL(item.u, root).href;
    var head = el("span", "result-head");
    var title = el("span", "result-title");
    title.appendChild(highlighted(item.t, found.marks));
    head.appendChild(title);
    head.appendChild(el("span", "kind kind-" + item.k, KINDS[item.k] || item.k));
    a.appendChild(head);
    var said = (item.s || "") + (found.names.length ? " · also " + found.names.join(", ") : "");
    if (said) {
      var text = el("span", "result-text");
      text.appendChild(highlighted(found.names.length ? said : snippet(said, found.marks), found.marks));
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

    // The results for the box's words; again: once every item is in, unless the reader has moved to an
    // option or closed the list since.
    function draw(again) {
      var query = input.value.trim();
      if (!query) { close(); return; }
      load().then(function () {
        if (input.value.trim() !== query || (again && (active >= 0 || popup.hidden))) { return; }
        var results = search(query, 8);
        var nearest = results.length || !complete ? [] : suggestions(query);
        activate(-1);
        list.textContent = "";
        results.forEach(function (found, i) {
          list.appendChild(option(resultLink(found), i));
        });
        nearest.forEach(function (word, i) {
          var a = option(el("a", "search-suggestion", "Did you mean “" + word + "”?"), results.length + i);
          a.href = resultsUrl(word);
          list.appendChild(a);
        });
        var all = option(el("a", "search-all", "All results for “" + query + "”"), results.length + nearest.length);
        all.href = resultsUrl(query);
        list.appendChild(all);
        // Read out by screen readers; shown only when nothing was found.
        status.textContent = results.length
          ? results.length + (results.length === 1 ? " result" : " results") + ", then all results"
          : complete
            ? "Nothing found for “" + query + "”." + (nearest.length ? " Did you mean one of these?" : "")
            : "Searching…";
        status.classList.toggle("vh", results.length > 0);
        open();
        if (!complete) { whenComplete(function () { draw(true); }); }
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
      timer = setTimeout(function () { draw(false); }, 60);
    });
    input.addEventListener("keydown", function (event) {
      var count = options().length;
      var shown = !popup.hidden && count > 0;
      if (event.key === "ArrowDown" || event.key === "ArrowUp") {
        event.preventDefault();
        if (!shown) { draw(false); return; }
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

  // /search/: every result for ?q=, grouped by kind (drawn as soon as the names are in, and again once
  // every item is); nearest words when nothing is found.
  function drawPage(box) {
    var query = new URLSearchParams(location.search).get("q") || "";
    var input = document.getElementById("page-q");
    if (input) { input.value = query; }
    if (!query.trim()) { return; }
    box.textContent = "Searching…";
    var show = function () {
      var results = search(query, 200);
      if (!results.length && !complete) { return; }
      box.textContent = "";
      var heading = el("h2", "", results.length
        ? results.length + (results.length === 1 ? " result" : " results") + " for “" + query + "”"
        : "Nothing found for “" + query + "”");
      heading.id = "results";
      box.appendChild(heading);
      var nearest = results.length ? [] : suggestions(query);
      if (nearest.length) {
        var p = el("p", "search-suggestions", "Did you mean ");
        nearest.forEach(function (word, i) {
          var a = el("a", "", word);
          a.href = resultsUrl(word);
          p.appendChild(a);
          p.appendChild(document.createTextNode(i === nearest.length - 1 ? "?" : (i === nearest.length - 2 ? " or " : ", ")));
        });
        box.appendChild(p);
      }
      ["country", "erp", "page", "fact"].forEach(function (kind) {
        var mine = results.filter(function (r) { return r.item.k === kind; });
        if (!mine.length) { return; }
        var ul = el("ul", "search-list");
        mine.forEach(function (found) {
          var li = el("li");
          li.appendChild(resultLink(found));
          ul.appendChild(li);
        });
        box.appendChild(el("h3", "", { country: "Countries", erp: "ERP products", page: "Pages", fact: "Facts" }[kind]));
        box.appendChild(ul);
      });
    };
    load().then(function () {
      show();
      if (!complete) { whenComplete(show); }
    }).catch(function () {
      box.textContent = "The search index could not be loaded; the A–Z index below lists everything.";
    });
  }

  // Escape closes the header's Countries panel and the compare page's chooser. Focus inside a panel would
  // drop to the page's <body> as the panel hides it, so it goes back to the panel's opener (its summary).
  function closeJumpPanels() {
    var panels = document.querySelectorAll("details.jump[open], details#compare-choose[open]");
    for (var i = 0; i < panels.length; i++) {
      var inside = panels[i].contains(document.activeElement);
      panels[i].open = false;
      if (inside) { panels[i].querySelector("summary").focus(); }
    }
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
