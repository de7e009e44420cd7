// The try-it control of /api/: builds the request URL from the chosen endpoint and parameter, sends it
// from the browser, and shows the status, the headers that matter and the formatted body. Served as a
// file (no inline script), so the page works under a strict Content-Security-Policy.
(function () {
  "use strict";
  var form = document.getElementById("try-it-form");
  if (!form) { return; }
  // The site's root: this script is <root>assets/try-it.js, wherever the site is published.
  var root = new URL("../", document.currentScript.src);
  var endpoint = document.getElementById("try-endpoint");
  var params = form.querySelectorAll(".try-param");
  var shownHeaders = ["content-type", "content-length", "etag", "last-modified", "cache-control",
    "access-control-allow-origin"];

  function byId(id) { return document.getElementById(id); }

  function chosen() {
    return endpoint.options[endpoint.selectedIndex];
  }

  // The request URL: the endpoint's path with its {parameter} filled in, on this site's origin.
  function requestUrl() {
    var option = chosen();
    var path = option.value;
    var name = option.getAttribute("data-param");
    if (name) {
      var select = byId("try-" + name);
      path = path.replace("{" + name + "}", encodeURIComponent(select.value));
    }
    return new URL(path.replace(/^\//, ""), root).href;
  }

  function curlLine(url) {
    return "curl -sS '" + url.replace(/'/g, "'\\''") + "'";
  }

  function update() {
    var path = chosen().value;
    for (var i = 0; i < params.length; i++) {
      params[i].hidden = params[i].getAttribute("data-for") !== path;
    }
    var url = requestUrl();
    byId("try-url").textContent = url;
    byId("try-curl").textContent = curlLine(url);
    byId("try-copied").textContent = "";
  }

  function show(status, headers, body, ms) {
    byId("try-result").hidden = false;
    byId("try-status").textContent = status;
    byId("try-time").textContent = ms === null ? "" : "(" + ms + " ms)";
    var rows = byId("try-headers");
    rows.textContent = "";
    headers.forEach(function (pair) {
      var tr = document.createElement("tr");
      var th = document.createElement("th");
      th.scope = "row";
      th.textContent = pair[0];
      var td = document.createElement("td");
      td.textContent = pair[1];
      tr.appendChild(th);
      tr.appendChild(td);
      rows.appendChild(tr);
    });
    byId("try-body").textContent = body;
  }

  function send(event) {
    event.preventDefault();
    var url = requestUrl();
    var started = performance.now();
    byId("try-status").textContent = "sending…";
    fetch(url, { headers: { "Accept": "application/json" } }).then(function (response) {
      return response.text().then(function (text) {
        var ms = Math.round(performance.now() - started);
        var headers = [];
        shownHeaders.forEach(function (name) {
          var value = response.headers.get(name);
          if (value !== null) { headers.push([name, value]); }
        });
        var body = text;
        var type = response.headers.get("content-type") || "";
        if (type.indexOf("json") !== -1) {
          try { body = JSON.stringify(JSON.parse(text), null, 2); } catch (e) { body = text; }
        }
        show(response.status + " " + response.statusText, headers, body, ms);
      });
    }).catch(function (error) {
      show("request failed: " + error.message, [], "", null);
    });
  }

  function copy() {
    var text = byId("try-curl").textContent;
    var done = function () { byId("try-copied").textContent = "copied"; };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(done, function () { selectCurl(); });
    } else {
      selectCurl();
    }
  }

  // Without the clipboard API (plain http), select the line so the reader can copy it.
  function selectCurl() {
    var range = document.createRange();
    range.selectNodeContents(byId("try-curl"));
    var selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
    byId("try-copied").textContent = "selected: press Ctrl+C or ⌘C to copy";
  }

  endpoint.addEventListener("change", update);
  for (var i = 0; i < params.length; i++) {
    params[i].addEventListener("change", update);
  }
  form.addEventListener("submit", send);
  byId("try-copy").addEventListener("click", copy);
  update();
})();
