// The follow section of /changes/: tick countries, get their feeds as one subscription list (OPML 2.0)
// that a feed reader imports as one subscription per country, and their feed and calendar links.
// Without this script the section is a list of every country's feed and calendar links.
"use strict";
(function () {
  function escapeXml(text) {
    return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
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
    form.classList.add("scripted");
    update();
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
