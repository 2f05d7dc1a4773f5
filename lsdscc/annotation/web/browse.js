// The browse page: the query list on the left (filterable), the current query on the right:
// its groups of references (or its candidates), and a system's hypotheses with MaxBLEU.
"use strict";

const B = {doc: null, shown: [], current: 0};

function fmt(x) { return x === null || x === undefined ? "" : Number(x).toFixed(4); }

function itemText(item) {
  const parts = [item.query];
  for (const g of item.groups || []) parts.push(...g.references);
  for (const c of item.candidates || []) parts.push(c.text);
  for (const h of item.hypotheses || []) parts.push(h.text);
  return parts.join("\n").toLowerCase();
}

function renderList() {
  const list = document.getElementById("items");
  list.replaceChildren(...B.shown.map((i, pos) => {
    const item = B.doc.items[i];
    const count = item.groups ? item.groups.length : item.candidates.length;
    const n = count + (item.groups ? (count === 1 ? " group" : " groups") : " cands");
    return el("li", {class: pos === B.current ? "current" : "", dataset: {index: String(i)},
      onclick: () => select(pos)}, [el("span", {class: "q", title: item.query}, [item.query]), el("span", {class: "n"}, [n])]);
  }));
  document.getElementById("count").textContent = B.shown.length + " of " + B.doc.items.length + " queries";
  const cur = list.children[B.current];
  if (cur) cur.scrollIntoView({block: "nearest"});
}

function groupsNode(item) {
  return item.groups.map(g => el("div", {class: "group " + groupClass(g.id)}, [
    el("span", {class: "group-tag " + groupClass(g.id)}, [g.id || "refs"]),
    el("span", {class: "label"}, [g.references.length + (g.references.length === 1 ? " reference" : " references")]),
    el("ul", {}, g.references.map(r => el("li", {}, [r]))),
  ]));
}

function candidatesNode(item) {
  return [el("ol", {id: "candidates"}, item.candidates.map((c, k) => el("li", {class: "cand", dataset: {relevant: ""}}, [
    el("span", {class: "k"}, [String(k + 1)]),
    el("span", {}, [el("span", {class: "group-tag " + groupClass(c.proposed_group), title: "proposed group"}, [c.proposed_group])]),
    el("span", {class: "text"}, [c.text]),
    el("span", {class: "meta"}, [c.own ? "the query's own response" : "from “" + c.source_query + "” · Lucene " +
      fmt(c.lucene_score) + " · Doc2Vec " + fmt(c.doc2vec_cosine)]),
  ])))];
}

function hypothesesNode(item) {
  if (!item.hypotheses) return B.doc.maxbleu ? [el("p", {class: "hint"}, ["no hypotheses for this query"])] : [];
  return [
    el("h2", {}, ["hypotheses · MaxBLEU ", el("span", {id: "item-maxbleu"}, [fmt(item.maxbleu)])]),
    el("table", {class: "hyps"}, [
      el("tr", {}, [el("th", {}, ["hypothesis"]), el("th", {}, ["aligned group"]), el("th", {}, ["BLEU"])]),
      ...item.hypotheses.map(h => el("tr", {}, [el("td", {}, [h.text]),
        el("td", {}, [el("span", {class: "group-tag " + groupClass(h.group)}, [h.group])]),
        el("td", {class: "num"}, [fmt(h.bleu)])])),
    ]),
  ];
}

function renderDetail() {
  const item = B.doc.items[B.shown[B.current]];
  document.getElementById("query").textContent = item ? item.query : "no query matches the filter";
  const meta = item ? [item.id !== item.query ? item.id : "", item.stratum ? "stratum " + item.stratum : ""] : [];
  document.getElementById("query-meta").textContent = meta.filter(Boolean).map(x => "· " + x).join(" ");
  const body = document.getElementById("body");
  if (!item) { body.replaceChildren(); return; }
  const parts = [...hypothesesNode(item)];
  parts.push(el("h2", {}, [item.groups ? "reference groups" : "candidates (with the proposed groups)"]));
  parts.push(...(item.groups ? groupsNode(item) : candidatesNode(item)));
  body.replaceChildren(...parts);
}

function select(pos) {
  if (!B.shown.length) { B.current = 0; renderList(); renderDetail(); return; }
  B.current = Math.max(0, Math.min(B.shown.length - 1, pos));
  renderList();
  renderDetail();
}

function filter(text) {
  const needle = text.trim().toLowerCase();
  B.shown = B.doc.items.map((_, i) => i).filter(i => !needle || B.texts[i].includes(needle));
  select(0);
}

document.addEventListener("keydown", event => {
  const search = document.getElementById("search");
  if (event.key === "Escape") { search.blur(); return; }
  if (typingIn(event) || event.ctrlKey || event.altKey || event.metaKey || !B.doc) return;
  const actions = {ArrowDown: () => select(B.current + 1), j: () => select(B.current + 1),
                   ArrowUp: () => select(B.current - 1), k: () => select(B.current - 1), "/": () => search.focus()};
  const action = actions[event.key];
  if (!action) return;
  event.preventDefault();
  action();
});

(async function init() {
  try {
    B.doc = await api("/api/state");
    B.texts = B.doc.items.map(itemText);
    document.getElementById("source").textContent = B.doc.source + " · " + B.doc.items.length + " queries";
    if (B.doc.maxbleu) {
      document.getElementById("score").replaceChildren("MaxBLEU ", el("b", {id: "maxbleu"}, [fmt(B.doc.maxbleu.score)]),
        " over " + B.doc.maxbleu.queries + " queries ", el("span", {class: "sig"}, [B.doc.maxbleu.signature]));
    }
    document.getElementById("search").addEventListener("input", ev => filter(ev.target.value));
    filter("");
  } catch (err) {
    setStatus(err.message, true);
  }
})();
