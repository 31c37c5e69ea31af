"""The HTML report's style sheet and script, as constants (no file is read at import).

The script is the only one the page runs: the page's Content-Security-Policy allows exactly
its SHA-256 hash. It reads the JSON data block, and builds the cluster list a page at a time
(search, filters, sort, paging), fills a cluster's details only when it is opened, and shows
thumbnails in an overlay. Text from documents goes into the page through ``textContent``;
the only ``innerHTML`` it sets are fragments the Python side built and escaped.
"""

from __future__ import annotations

import base64
import hashlib

__all__ = ["CSS", "SCRIPT", "script_hash"]

CSS = """
*{box-sizing:border-box}body{margin:0;color:#1f2328;background:#f6f8fa;
font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
main{width:100%;margin:0;padding:20px clamp(12px,2.5vw,40px) 48px}
h1{font-size:1.6em;margin:0 0 4px}h2{font-size:1.2em;margin:28px 0 10px}
h3{font-size:1em;margin:14px 0 6px}nav a{margin-right:14px;color:#0969da}
a{color:#0969da}.meta,.more,caption,.snippet,dl.summary dt,.why{color:#59636e}
.more{font-style:italic}.card,dl.summary div{background:#fff;border:1px solid #d1d9e0;
border-radius:8px;padding:12px 14px}
dl.summary{display:grid;grid-template-columns:repeat(auto-fill,minmax(180px,1fr));gap:10px;margin:0}
dl.summary dt{font-size:.85em}dl.summary div.wide{grid-column:1/-1}
dl.summary dd{margin:0;font-size:1.35em;font-weight:600;overflow-wrap:anywhere}
dl.summary div.wide dd{font-size:1em;font-weight:400}
.split{display:grid;grid-template-columns:minmax(0,2fr) minmax(0,1fr);gap:16px}
@media (max-width:900px){.split{grid-template-columns:1fr}}
table{border-collapse:collapse;width:100%;background:#fff}caption{text-align:left;padding:0 0 6px}
th,td{border:1px solid #d1d9e0;padding:5px 8px;text-align:left;vertical-align:top}
th{background:#eef1f4;font-weight:600}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
code,.mono,table.diff td,table.diff th{font-family:ui-monospace,Menlo,Consolas,monospace}
.toolbar{display:flex;flex-wrap:wrap;gap:8px 16px;align-items:end;margin:0 0 10px}
.toolbar label{display:flex;flex-direction:column;font-size:.85em;color:#59636e}
.toolbar input,.toolbar select,.toolbar button{font:inherit;padding:4px 8px;border:1px solid
#d1d9e0;border-radius:6px;background:#fff;color:#1f2328}
.toolbar input[type=search]{min-width:min(420px,80vw)}.toolbar button{cursor:pointer}
.toolbar button:disabled{opacity:.45;cursor:default}#page-info{color:#59636e}
details.cluster{background:#fff;border:1px solid #d1d9e0;border-radius:8px;margin:0 0 6px}
details.cluster>summary{display:grid;grid-template-columns:5.5em 5.5em 9.5em minmax(0,1fr);
gap:8px;padding:8px 12px;cursor:pointer;align-items:baseline;list-style-position:inside}
@media (max-width:700px){details.cluster>summary{grid-template-columns:1fr 1fr}}
details.cluster>summary .rep{overflow-wrap:anywhere}details.cluster[open]>summary{
border-bottom:1px solid #d1d9e0;background:#f6f8fa;border-radius:8px 8px 0 0}
.body{padding:10px 14px}.snippet{display:block;font-size:.85em;overflow-wrap:anywhere}
ul.members{list-style:none;margin:0;padding:0;display:grid;gap:6px;
grid-template-columns:repeat(auto-fill,minmax(260px,1fr))}
ul.members li{background:#eef1f4;border-radius:6px;padding:4px 8px;overflow-wrap:anywhere}
ul.members li.rep{background:#dafbe1}ul.members li.rep>.id::after{content:" (representative)";
font-weight:400;color:#1a7f37}ul.members li .id{font-weight:600}
ul.members.images{grid-template-columns:repeat(auto-fill,minmax(150px,1fr))}
ul.members.images li{text-align:center;font-size:.85em}
img.thumb{display:block;max-width:140px;max-height:140px;margin:0 auto 4px;border:1px solid
#d1d9e0;border-radius:4px;cursor:zoom-in;background:#fff}
.placeholder{display:block;width:96px;height:96px;line-height:96px;margin:0 auto;
text-align:center;color:#59636e;border:1px solid #d1d9e0;border-radius:4px;
background:repeating-linear-gradient(45deg,#eef1f4 0 6px,#fff 6px 12px)}
.scroll{overflow-x:auto}table.diff{table-layout:fixed;font-size:13px}
table.diff col.ln{width:3.5em}table.diff th{font-weight:400;overflow-wrap:anywhere}
table.diff td{white-space:pre-wrap;overflow-wrap:anywhere;border-width:0 1px}
table.diff td.ln{color:#8c959f;text-align:right;background:#f6f8fa}
tr.del td.a,tr.chg td.a{background:#ffebe9}tr.ins td.b,tr.chg td.b{background:#dafbe1}
del{background:#ffcecb;text-decoration:line-through}ins{background:#aceebb;text-decoration:none}
mark.sh{background:#fff1a8;color:inherit;border-bottom:1px solid #d4a72c}
del mark.sh,ins mark.sh{background:transparent}
tr.skip td{background:#eef1f4;color:#59636e;text-align:center;font-style:italic}
.pairimgs{display:flex;flex-wrap:wrap;gap:16px;align-items:flex-end}
.pairimgs figure{margin:0;text-align:center}
svg text{font:12px system-ui,sans-serif;fill:#59636e}
#overlay{position:fixed;inset:0;background:rgba(15,20,25,.82);display:none;z-index:10;
align-items:center;justify-content:center;flex-direction:column;gap:10px;padding:20px}
#overlay.open{display:flex}#overlay img{max-width:min(92vw,1024px);max-height:80vh;
width:auto;min-width:min(60vw,512px);image-rendering:auto;background:#fff;border-radius:6px}
#overlay p{color:#fff;margin:0}#overlay a{color:#9ecbff}
"""

SCRIPT = r"""
(function () {
  "use strict";
  var body = document.body;
  window.addEventListener("error", function (e) {
    body.setAttribute("data-error", String(e.message));
  });
  var D = JSON.parse(document.getElementById("report-data").textContent);
  var C = D.clusters, docs = D.docs, snip = D.snip, href = D.href, thumb = D.thumb;
  var $ = function (id) { return document.getElementById(id); };
  var q = $("q"), minSize = $("min-size"), maxLow = $("max-low"), sort = $("sort");
  var list = $("cluster-list"), info = $("page-info"), prev = $("prev"), next = $("next");
  var page = 0, view = [], hayCache = {};
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) { e.className = cls; }
    if (text !== undefined && text !== null) { e.textContent = String(text); }
    return e;
  }
  function fmt(x) { return x === null ? "\u2013" : x.toFixed(3); }
  function hay(k) {
    if (hayCache[k] === undefined) {
      var c = C[k], parts = ["#" + c[0]];
      for (var i = 0; i < c[6].length; i++) {
        parts.push(docs[c[6][i]]);
        if (snip[c[6][i]]) { parts.push(snip[c[6][i]]); }
      }
      hayCache[k] = parts.join("\n").toLowerCase();
    }
    return hayCache[k];
  }
  function compute() {
    var needle = q.value.trim().toLowerCase(), size = parseInt(minSize.value, 10) || 0;
    var low = parseFloat(maxLow.value);
    var idMatch = /^#?\d+$/.test(needle) ? parseInt(needle.replace("#", ""), 10) : -1;
    view = [];
    for (var k = 0; k < C.length; k++) {
      var c = C[k];
      if (c[1] < size) { continue; }
      if (!isNaN(low) && (c[3] === null || c[3] > low)) { continue; }
      if (needle && c[0] !== idMatch && hay(k).indexOf(needle) < 0) { continue; }
      view.push(k);
    }
    var s = sort.value;
    view.sort(function (a, b) {
      var x = C[a], y = C[b];
      if (s === "low") {
        var lx = x[3] === null ? 2 : x[3], ly = y[3] === null ? 2 : y[3];
        if (lx !== ly) { return lx - ly; }
      } else if (s === "id") { return x[0] - y[0]; }
      return (y[1] - x[1]) || (x[0] - y[0]);
    });
  }
  function member(c, m) {
    var li = el("li", m === c[2] ? "rep" : "");
    if (thumb[m]) {
      var img = el("img", "thumb");
      img.src = thumb[m]; img.alt = "thumbnail of " + docs[m];
      img.setAttribute("data-doc", String(m));
      li.appendChild(img);
    } else if (D.bad[m] !== undefined) {
      var ph = el("span", "placeholder", "?");
      ph.setAttribute("role", "img"); ph.title = D.bad[m];
      ph.setAttribute("aria-label", "no preview of " + docs[m]);
      li.appendChild(ph);
    }
    var name = href[m] ? el("a", "id", docs[m]) : el("span", "id", docs[m]);
    if (href[m]) { name.href = href[m]; }
    li.appendChild(name);
    if (snip[m] && !thumb[m]) { li.appendChild(el("span", "snippet", snip[m])); }
    return li;
  }
  function fill(det, k) {
    var c = C[k], box = el("div", "body"), images = false;
    for (var i = 0; i < c[6].length; i++) {
      if (thumb[c[6][i]] || D.bad[c[6][i]] !== undefined) { images = true; }
    }
    box.appendChild(el("h3", "", "Members (" + c[1].toLocaleString("en") + ")"));
    var ul = el("ul", images ? "members images" : "members");
    for (var j = 0; j < c[6].length; j++) { ul.appendChild(member(c, c[6][j])); }
    box.appendChild(ul);
    if (c[1] > c[6].length) {
      var rest = (c[1] - c[6].length).toLocaleString("en");
      box.appendChild(el("p", "more", "+" + rest + " more members not listed"));
    }
    if (c[7] >= 0) {
      var more = el("div", "detail");
      more.innerHTML = D.details[c[7]];
      box.appendChild(more);
    } else {
      box.appendChild(el("p", "more", "Pairs and diffs of this cluster were left out to keep " +
        "the report within its size budget (" + D.budget + "); they are included for the " +
        D.withDetails.toLocaleString("en") + " largest clusters."));
    }
    det.appendChild(box);
  }
  function row(k) {
    var c = C[k], det = el("details", "cluster"), sum = el("summary");
    det.id = "cluster-" + c[0];
    sum.appendChild(el("span", "mono", "#" + c[0]));
    sum.appendChild(el("span", "num", c[1].toLocaleString("en") + " docs"));
    var range = c[3] === null ? "no pairs inside" : fmt(c[3]) + " \u2013 " + fmt(c[4]);
    sum.appendChild(el("span", "sim", range));
    var rep = el("span", "rep");
    rep.appendChild(el("span", "mono", docs[c[2]]));
    if (snip[c[2]]) { rep.appendChild(el("span", "snippet", snip[c[2]])); }
    sum.appendChild(rep);
    det.appendChild(sum);
    det.addEventListener("toggle", function () {
      if (det.open && !det.getAttribute("data-filled")) {
        det.setAttribute("data-filled", "1");
        fill(det, k);
      }
    });
    return det;
  }
  function render() {
    var size = D.pageSize, pages = Math.max(1, Math.ceil(view.length / size));
    page = Math.min(Math.max(page, 0), pages - 1);
    list.textContent = "";
    var frag = document.createDocumentFragment();
    var end = Math.min(view.length, (page + 1) * size);
    for (var i = page * size; i < end; i++) { frag.appendChild(row(view[i])); }
    list.appendChild(frag);
    if (!view.length) { list.appendChild(el("p", "more", "No cluster matches.")); }
    info.textContent = "Page " + (page + 1) + " of " + pages + " \u00b7 " +
      view.length.toLocaleString("en") + " of " + C.length.toLocaleString("en") + " clusters";
    prev.disabled = page === 0; next.disabled = page >= pages - 1;
  }
  function update() { page = 0; compute(); render(); }
  [q, minSize, maxLow].forEach(function (e) { e.addEventListener("input", update); });
  sort.addEventListener("change", update);
  prev.addEventListener("click", function () { page--; render(); });
  next.addEventListener("click", function () { page++; render(); });
  var overlay = $("overlay"), big = $("overlay-img"), cap = $("overlay-caption");
  document.addEventListener("click", function (e) {
    var t = e.target;
    if (t && t.classList && t.classList.contains("thumb")) {
      e.preventDefault();
      var m = t.getAttribute("data-doc");
      big.src = t.src; big.alt = t.alt; cap.textContent = m !== null ? docs[+m] : t.alt;
      var link = $("overlay-link");
      link.hidden = !(m !== null && href[+m]);
      if (!link.hidden) { link.href = href[+m]; }
      overlay.classList.add("open");
    } else if (overlay.classList.contains("open") && (t === overlay || t === big)) {
      overlay.classList.remove("open");
    }
  });
  document.addEventListener("keydown", function (e) {
    if (e.key === "Escape") { overlay.classList.remove("open"); }
  });
  var params = new URLSearchParams(location.hash.replace(/^#/, ""));
  if (params.has("q")) { q.value = params.get("q"); }
  if (params.has("size")) { minSize.value = params.get("size"); }
  if (params.has("low")) { maxLow.value = params.get("low"); }
  if (params.has("sort")) { sort.value = params.get("sort"); }
  compute();
  page = (parseInt(params.get("page"), 10) || 1) - 1;
  render();
  if (params.has("open")) {
    var first = list.querySelector("details.cluster");
    if (first) {
      first.setAttribute("data-filled", "1");
      fill(first, view[page * D.pageSize]);
      first.open = true;
      var shot = first.querySelector("img.thumb");
      if (params.has("overlay") && shot) { shot.click(); }
    }
  }
  body.setAttribute("data-ready", "1");
})();
"""


def script_hash(script: str = SCRIPT) -> str:
    """The CSP source that allows exactly ``script``: ``'sha256-<base64>'``."""
    digest = hashlib.sha256(script.encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode('ascii')}'"
