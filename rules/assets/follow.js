// The follow section of /changes/: tick countries, get their feeds as one subscription list (OPML 2.0)
// that a feed reader imports as one subscription per country, and their feed and calendar links.
// With it, a box a country (one Tab stop each) and a filter of the list; without it the section is a list
// of every country's feed and calendar links.
"use strict";
(function () {
  function escapeXml(text) {
    return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
  }
  // The follow list's filter: as the reader types, a country stays in the list when its name holds what is
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
    var form = document.getElementById("follow-form");
    if (!form) return;
    var result = document.getElementById("follow-result");
    var opml = document.getElementById("follow-opml");
    var count = document.getElementById("follow-count");
    var links = document.getElementById("follow-links");
    var boxes = form.querySelectorAll("input[name=country]");
    function chosen() {
      var out = [];
      boxes.forEach(function (box) {
        if (!box.checked) return;
        var item = box.closest("li");
        var anchors = item.querySelectorAll("a");
        // The feed is <country page>changes.xml: its page is the feed's folder, resolved from the feed's
        // own address, so it stays under the path the site is published at (/locref/no/), not the host's root.
        out.push({
          code: box.value,
          name: item.querySelector("label").textContent.trim(),
          feed: anchors[0].href,
          page: new URL("./", anchors[0].href).href,
          calendar: anchors.length > 1 ? anchors[1].href : null,
        });
      });
      return out;
    }
    function update() {
      var list = chosen();
      result.hidden = list.length === 0;
      count.textContent = String(list.length);
      var title = document.title.split(" · ").pop() + ": " + list.map(function (c) { return c.name; }).join(", ");
      var xml = '<?xml version="1.0" encoding="utf-8"?>\n<opml version="2.0">\n  <head><title>' + escapeXml(title) + "</title></head>\n  <body>\n";
      list.forEach(function (c) {
        xml += '    <outline type="rss" text="' + escapeXml(c.name + ": changes") + '" title="' + escapeXml(c.name + ": changes") +
          '" xmlUrl="' + escapeXml(c.feed) + '" htmlUrl="' + escapeXml(c.page) + '"/>\n';
      });
      xml += "  </body>\n</opml>\n";
      opml.href = "data:text/x-opml;charset=utf-8," + encodeURIComponent(xml);
      opml.setAttribute("download", "follow-" + list.map(function (c) { return c.code; }).join("-") + ".opml");
      links.textContent = "";
      list.forEach(function (c) {
        var li = document.createElement("li");
        li.appendChild(document.createTextNode(c.name + ": "));
        var feed = document.createElement("a");
        feed.href = c.feed;
        feed.textContent = c.feed;
        li.appendChild(feed);
        if (c.calendar) {
          li.appendChild(document.createTextNode(" · "));
          var cal = document.createElement("a");
          cal.href = c.calendar;
          cal.textContent = c.calendar;
          li.appendChild(cal);
        }
        links.appendChild(li);
      });
    }
    boxes.forEach(function (box) {
      box.hidden = false;
      box.addEventListener("change", update);
    });
    // One Tab stop a country, its box: its feed and calendar stay links for the pointer, and are listed
    // (in the Tab order) under the list once it is ticked.
    form.querySelectorAll(".follow-list a").forEach(function (a) {
      a.tabIndex = -1;
    });
    var filter = document.getElementById("follow-filter");
    filterList(filter, document.getElementById("follow-countries"), document.getElementById("follow-filter-count"));
    filter.closest(".list-filter").hidden = false;
    form.classList.add("scripted");
    update();
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
