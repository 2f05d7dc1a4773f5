"""A results page: ``multiref score ... --format html`` as one self-contained HTML file.

The page holds no external asset (no script, font or style sheet from elsewhere): the data is
one JSON document inside the page, and a short script draws from it

- the systems x metrics table, each cell the score with its interval and its p-value against
  the baseline (the first system), a mark where the p-value is below the level the legend
  states; a click on a column heading sorts the systems by that metric;
- the legend (the test, its resamples and seed; what a mark means) and every signature;
- the items, a page at a time, filterable by text and sortable by any system's per-item score
  (or by the difference between two systems); a click on an item shows its context, its
  references (in their groups, when the test set has groups), each system's outputs and
  each system's per-item score on every metric.

Every text from the inputs is put on the page as text (``textContent``), never as markup, and
the JSON is written so that no ``<`` or ``&`` of the data can end the script element: an output
such as ``</script><img onerror=...>`` shows as those characters. The same inputs give the same
bytes (no time stamp, no random ids).
"""

from __future__ import annotations

import html
import json
import math

_STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:1.5rem;color:#1d2430;background:#fff}
h1{font-size:1.4rem;margin:0 0 .3rem}h2{font-size:1.1rem;margin:1.6rem 0 .5rem}
p.sub{color:#58606e;margin:.2rem 0 1rem}
table{border-collapse:collapse;font-size:.9rem}
th,td{border-bottom:1px solid #dde1e7;padding:.35rem .6rem;text-align:right;vertical-align:top}
th{background:#f3f5f8;cursor:pointer;user-select:none;white-space:nowrap}
th.text,td.text{text-align:left}
td .ci{display:block;color:#69707d;font-size:.78rem}
td .p{display:block;color:#69707d;font-size:.78rem}
span.best{font-weight:700}
.mark{color:#b3261e;font-weight:700}
.baseline{color:#58606e;font-size:.75rem;margin-left:.3rem}
#legend{color:#3a4250;font-size:.88rem;max-width:60rem}
code,.sig{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.8rem}
ul.sigs{padding-left:1.1rem}ul.sigs li{margin:.15rem 0;word-break:break-all}
#controls{display:flex;gap:.8rem;flex-wrap:wrap;align-items:center;margin:.4rem 0 .6rem;font-size:.9rem}
#items{width:100%;table-layout:fixed}#items tr.item{cursor:pointer}#items tr.item:hover{background:#f7f9fc}
#items>tr.item>td.text{overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
#items>tr>th:first-child{width:3rem}#items>tr>th:nth-child(2){width:16%}#items>tr>th:last-child{width:6rem}
.detail table{table-layout:auto;width:auto}.detail td.text{white-space:normal;min-width:20rem;max-width:60rem}
tr.detail>td{background:#fbfcfe;text-align:left;white-space:normal}
.detail h3{font-size:.9rem;margin:.5rem 0 .2rem}
.detail ol,.detail ul{margin:.1rem 0 .4rem;padding-left:1.4rem}
.detail .group{color:#58606e;font-size:.8rem}
.detail table{margin:.3rem 0}
#pager{margin:.6rem 0;font-size:.9rem}#pager button{margin-right:.4rem}
"""

_SCRIPT = r"""
"use strict";
const D = JSON.parse(document.getElementById("data").textContent);
function el(tag, text, cls) { const e = document.createElement(tag); if (text !== undefined && text !== null) e.textContent = text; if (cls) e.className = cls; return e; }
function num(v) { return v === null || v === undefined ? "null" : v.toFixed(4); }
const markBelow = D.alpha;
function drawResults() {
  const table = document.getElementById("results"); table.textContent = "";
  const head = el("tr"); head.appendChild(el("th", "system", "text"));
  D.metrics.forEach((m, j) => { const th = el("th", m + (state.systemSort === j ? (state.systemDesc ? " \u25BC" : " \u25B2") : "")); th.title = "sort by " + m; th.dataset.metric = j; th.addEventListener("click", () => sortSystems(j)); head.appendChild(th); });
  table.appendChild(head);
  const best = D.metrics.map((m, j) => Math.max(...D.results.map(r => r[j].score === null ? -Infinity : r[j].score)));
  state.systemOrder.forEach(s => {
    const tr = el("tr"); const name = el("td", D.systems[s], "text");
    if (s === 0) name.appendChild(el("span", "baseline", "baseline"));
    tr.appendChild(name);
    D.metrics.forEach((m, j) => {
      const r = D.results[s][j]; const td = el("td");
      td.appendChild(el("span", num(r.score), r.score !== null && r.score === best[j] && D.systems.length > 1 ? "best" : null));
      if (r.p_value !== null && r.p_value < markBelow) td.appendChild(el("span", D.mark, "mark"));
      if (r.ci) td.appendChild(el("span", "[" + num(r.ci[0]) + ", " + num(r.ci[1]) + "]", "ci"));
      if (r.p_value !== null) td.appendChild(el("span", "p = " + r.p_value.toFixed(4), "p"));
      tr.appendChild(td);
    });
    table.appendChild(tr);
  });
}
function sortSystems(j) {
  state.systemDesc = state.systemSort === j ? !state.systemDesc : true; state.systemSort = j;
  const key = s => D.results[s][j].score === null ? -Infinity : D.results[s][j].score;
  state.systemOrder.sort((a, b) => (state.systemDesc ? key(b) - key(a) : key(a) - key(b)) || a - b);
  drawResults();
}
function itemKey(item) {
  const m = state.metric, a = item.scores[state.system][m];
  if (state.versus < 0) return a;
  const b = item.scores[state.versus][m];
  return a === null || b === null ? null : a - b;
}
function visibleItems() {
  const q = state.filter.toLowerCase();
  let idx = D.items.map((_, i) => i);
  if (q) idx = idx.filter(i => { const it = D.items[i]; return [it.id, it.context.join(" "), ...it.outputs.flat(), ...it.references].join("\n").toLowerCase().includes(q); });
  if (state.itemSort !== "order") {
    const sign = state.itemSort === "desc" ? -1 : 1;
    idx.sort((a, b) => { const ka = itemKey(D.items[a]), kb = itemKey(D.items[b]);
      if (ka === null && kb === null) return a - b; if (ka === null) return 1; if (kb === null) return -1;
      return sign * (ka - kb) || a - b; });
  }
  return idx;
}
function detailRow(item, span) {
  const tr = el("tr", null, "detail"); const td = el("td"); td.colSpan = span; const box = el("div", null, "detail");
  box.appendChild(el("h3", "context")); const ctx = el("ol"); item.context.forEach(t => ctx.appendChild(el("li", t))); box.appendChild(ctx);
  box.appendChild(el("h3", "references (" + item.references.length + ")"));
  if (item.groups) { item.groups.forEach((g, k) => { box.appendChild(el("div", "group " + (item.group_ids ? item.group_ids[k] : k + 1), "group")); const ul = el("ul"); g.forEach(r => ul.appendChild(el("li", r))); box.appendChild(ul); }); }
  else { const ol = el("ol"); item.references.forEach(r => ol.appendChild(el("li", r))); box.appendChild(ol); }
  box.appendChild(el("h3", "outputs and per-item scores"));
  const t = el("table"); const h = el("tr"); h.appendChild(el("th", "system", "text")); h.appendChild(el("th", "output", "text"));
  D.metrics.forEach(m => h.appendChild(el("th", m))); t.appendChild(h);
  D.systems.forEach((name, s) => { const r = el("tr"); r.appendChild(el("td", name, "text"));
    const out = el("td", null, "text"); item.outputs[s].forEach((o, k) => { if (k) out.appendChild(el("br")); out.appendChild(document.createTextNode(o)); });
    r.appendChild(out); D.metrics.forEach((m, j) => r.appendChild(el("td", num(item.scores[s][j])))); t.appendChild(r); });
  box.appendChild(t); td.appendChild(box); tr.appendChild(td); return tr;
}
function drawItems() {
  const idx = visibleItems(); const pages = Math.max(1, Math.ceil(idx.length / D.page_size));
  state.page = Math.min(state.page, pages - 1);
  const table = document.getElementById("items"); table.textContent = "";
  const head = el("tr"); ["#", "id", "context (last turn)", "output (" + D.systems[state.system] + ")", D.metrics[state.metric]].forEach((t, k) => head.appendChild(el("th", t, k > 0 && k < 4 ? "text" : null)));
  table.appendChild(head);
  idx.slice(state.page * D.page_size, (state.page + 1) * D.page_size).forEach(i => {
    const it = D.items[i]; const tr = el("tr", null, "item"); tr.dataset.index = i;
    [String(i + 1), it.id, it.context[it.context.length - 1] || "", it.outputs[state.system].join(" | ")].forEach((t, k) => tr.appendChild(el("td", t, k ? "text" : null)));
    const key = itemKey(it); tr.appendChild(el("td", key === null ? "null" : key.toFixed(4)));
    tr.addEventListener("click", () => { state.open = state.open === i ? -1 : i; drawItems(); });
    table.appendChild(tr);
    if (state.open === i) table.appendChild(detailRow(it, 5));
  });
  document.getElementById("count").textContent = idx.length + " of " + D.items.length + " items; page " + (state.page + 1) + " of " + pages;
  document.getElementById("prev").disabled = state.page === 0; document.getElementById("next").disabled = state.page >= pages - 1;
}
function option(select, value, text) { const o = el("option", text); o.value = value; select.appendChild(o); }
function controls() {
  const sys = document.getElementById("system"), vs = document.getElementById("versus"), met = document.getElementById("metric");
  D.systems.forEach((n, s) => option(sys, s, n)); option(vs, -1, "(none)"); D.systems.forEach((n, s) => option(vs, s, n));
  D.metrics.forEach((m, j) => option(met, j, m));
  sys.addEventListener("change", () => { state.system = +sys.value; drawItems(); });
  vs.addEventListener("change", () => { state.versus = +vs.value; drawItems(); });
  met.addEventListener("change", () => { state.metric = +met.value; drawItems(); });
  document.getElementById("order").addEventListener("change", e => { state.itemSort = e.target.value; state.page = 0; drawItems(); });
  document.getElementById("filter").addEventListener("input", e => { state.filter = e.target.value; state.page = 0; state.open = -1; drawItems(); });
  document.getElementById("prev").addEventListener("click", () => { state.page--; drawItems(); });
  document.getElementById("next").addEventListener("click", () => { state.page++; drawItems(); });
}
const state = { systemOrder: D.systems.map((_, s) => s), systemSort: -1, systemDesc: true, system: 0, versus: -1, metric: 0,
                itemSort: "order", filter: "", page: 0, open: -1 };
controls(); drawResults(); drawItems();
"""

_BODY = """<h1>{title}</h1>
<p class="sub">{subtitle}</p>
<h2>Scores</h2>
<table id="results"></table>
<p id="legend">{legend}</p>
<h2>Signatures</h2>
<ul class="sigs">{signatures}</ul>
<h2>Items</h2>
<div id="controls">
<label>system <select id="system"></select></label>
<label>minus <select id="versus"></select></label>
<label>metric <select id="metric"></select></label>
<label>order <select id="order"><option value="order">as in the test set</option>
<option value="asc">score, lowest first</option><option value="desc">score, highest first</option></select></label>
<label>filter <input id="filter" type="search" placeholder="text in the id, context, references or outputs"></label>
</div>
<table id="items"></table>
<div id="pager"><button id="prev" type="button">previous</button><button id="next" type="button">next</button>
<span id="count"></span></div>
"""

PAGE_SIZE = 50


def _number(value):
    """A JSON-safe score: None for a missing or non-finite value."""
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def _script_json(data) -> str:
    """``data`` as JSON that cannot end or break out of the script element holding it."""
    text = json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def page_data(results, items, *, legend: str, alpha: float, mark: str) -> dict:
    """The page's JSON document. ``results``: ``[(system name, {metric: {"score", "ci",
    "p_value", "signature"}})]`` in the systems' order (the first is the baseline); ``items``:
    ``[{"id", "context": [turns], "references": [...], "groups": [[...]] or None, "group_ids",
    "outputs": [[outputs] per system], "scores": [[per-item score per metric] per system]}]``."""
    metrics = list(results[0][1]) if results else []
    cells = [[{"score": _number(r[m]["score"]), "ci": [_number(c) for c in r[m]["ci"]] if r[m].get("ci") else None,
               "p_value": _number(r[m].get("p_value"))} for m in metrics] for _name, r in results]
    return {"systems": [name for name, _r in results], "metrics": metrics, "results": cells,
            "signatures": {m: results[0][1][m]["signature"] for m in metrics}, "legend": legend,
            "alpha": alpha, "mark": mark, "page_size": PAGE_SIZE,
            "items": [dict(item, scores=[[_number(v) for v in row] for row in item["scores"]]) for item in items]}


def render(data: dict, title: str = "multiref score", subtitle: str = "") -> str:
    """The whole page for :func:`page_data`'s document."""
    signatures = "".join(f'<li><code class="sig">{html.escape(m)}</code>: <span class="sig">{html.escape(s)}</span></li>'
                         for m, s in data["signatures"].items())
    body = _BODY.format(title=html.escape(title), subtitle=html.escape(subtitle),
                        legend=html.escape(data["legend"] or "No significance test or interval was computed."),
                        signatures=signatures)
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            f"<title>{html.escape(title)}</title>\n<style>{_STYLE}</style>\n</head>\n<body>\n{body}"
            f'<script id="data" type="application/json">{_script_json(data)}</script>\n'
            f"<script>{_SCRIPT}</script>\n</body>\n</html>\n")
