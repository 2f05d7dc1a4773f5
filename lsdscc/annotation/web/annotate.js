// The annotation page: one query at a time, its candidates below; keyboard first.
// Every change goes to POST /api/label at once (in order, one at a time); the server saves
// the annotator's CSV after each. Undo sends the previous values back.
"use strict";

const S = {
  overview: null,   // GET /api/state: annotator, progress, queries [{id, query, done}], resume
  index: 0,         // current query (0-based)
  view: null,       // GET /api/query/N: the current query and its candidates
  focus: 0,         // focused candidate (0-based)
  undo: [],         // [{index, rows: [{row_id, relevant, group}] before the change}]
  pending: 0,       // changes sent and not yet answered
  queue: Promise.resolve(),    // the changes, sent one after the other
  actions: Promise.resolve(),  // the user's actions, run one after the other
};

// Run the user's actions in order: a key pressed while a query loads waits for it.
function run(action) {
  S.actions = S.actions.then(action).catch(err => setStatus(err.message, true));
}

// Resolves when every action so far has run and every change has been answered.
function settled() {
  return S.actions.then(() => S.queue);
}

function candidate(k) { return S.view.candidates[k]; }

function usedGroups() {
  // Group chips of the current query: numbers 1..max over chosen and proposed groups, then
  // other labels (from a file edited by hand), then the next free number.
  const labels = new Set();
  let max = 0;
  for (const c of S.view.candidates) {
    for (const g of [c.relevant === "1" ? c.group : "", c.proposed_group]) {
      if (!g) continue;
      if (/^[0-9]+$/.test(g)) max = Math.max(max, Number(g)); else labels.add(g);
    }
  }
  const chips = [];
  for (let i = 1; i <= max; i++) chips.push(String(i));
  return chips.concat([...labels].sort());
}

function newGroup() {
  let max = 0;
  for (const c of S.view.candidates) {
    if (c.relevant === "1" && /^[0-9]+$/.test(c.group)) max = Math.max(max, Number(c.group));
  }
  return String(max + 1);
}

function renderHeader() {
  const o = S.overview;
  document.getElementById("who").textContent = o.annotator + " → " + o.output;
  document.getElementById("progress-text").textContent = o.done + " of " + o.total + " queries done";
  const bar = document.getElementById("progress-bar");
  bar.max = o.total; bar.value = o.done;
  const strip = document.getElementById("strip");
  if (strip.children.length !== o.queries.length) {
    strip.replaceChildren(...o.queries.map((q, i) => el("span", {title: (i + 1) + ". " + q.query,
      onclick: () => run(() => openQuery(i))})));
  }
  o.queries.forEach((q, i) => {
    strip.children[i].classList.toggle("done", q.done);
    strip.children[i].classList.toggle("current", i === S.index);
  });
}

function renderCandidate(c, k, chips) {
  const rel = c.relevant === "1" ? "✓ relevant" : c.relevant === "0" ? "✗ not relevant" : "? unmarked";
  const chipNodes = chips.map(g => {
    const cls = ["chip", groupClass(g)];
    if (c.relevant === "1" && c.group === g) cls.push("chosen");
    else if (c.relevant !== "1" && c.proposed_group === g) cls.push("proposed");
    return el("button", {type: "button", class: cls.join(" "), title: "group " + g + (/^[1-9]$/.test(g) ? " (key " + g + ")" : ""),
      onclick: ev => { ev.stopPropagation(); run(() => setGroup(k, g)); }}, [g]);
  });
  chipNodes.push(el("button", {type: "button", class: "chip", title: "a new group (g)",
    onclick: ev => { ev.stopPropagation(); run(() => setGroup(k, newGroup())); }}, ["+"]));
  const source = c.own ? "the query's own response" :
    "from “" + c.source_query + "”" + (c.lucene_score !== null ? " · Lucene " + Number(c.lucene_score).toFixed(2) : "") +
    (c.doc2vec_cosine !== null ? " · Doc2Vec " + Number(c.doc2vec_cosine).toFixed(3) : "");
  return el("li", {class: "cand" + (k === S.focus ? " focused" : ""),
    dataset: {rowId: c.row_id, relevant: c.relevant, group: c.relevant === "1" ? c.group : ""},
    onclick: () => { S.focus = k; render(); }}, [
    el("span", {class: "k"}, [String(k + 1)]),
    el("button", {type: "button", class: "rel", title: "toggle relevant (Space)",
      onclick: ev => { ev.stopPropagation(); run(() => { S.focus = k; toggle(k); }); }}, [rel]),
    el("span", {class: "text"}, [c.reference]),
    el("span", {class: "chips"}, chipNodes),
    el("span", {class: "meta"}, [source]),
  ]);
}

function render() {
  renderHeader();
  const v = S.view;
  document.getElementById("query").textContent = v.query;
  document.getElementById("query-meta").textContent = "· " + v.id + " · stratum " + v.stratum + (v.done ? " · done" : "");
  document.getElementById("position").textContent = "query " + (S.index + 1) + " of " + S.overview.total;
  const chips = usedGroups();
  const list = document.getElementById("candidates");
  list.replaceChildren(...v.candidates.map((c, k) => renderCandidate(c, k, chips)));
  const focused = list.children[S.focus];
  if (focused) focused.scrollIntoView({block: "nearest"});
}

async function openQuery(index) {
  if (index < 0 || index >= S.overview.total) return;
  try {
    const view = await api("/api/query/" + index);
    if (index !== S.index) S.focus = 0;
    S.index = index;
    S.view = view;
    S.overview.queries[index].done = view.done;
    S.overview.done = view.progress.done;
    render();
  } catch (err) {
    setStatus(err.message, true);
  }
}

// Apply rows locally, remember the old values for undo (unless undoing), send them.
function change(rows, isUndo) {
  const before = rows.map(r => {
    const c = S.view.candidates.find(x => x.row_id === r.row_id);
    const old = {row_id: c.row_id, relevant: c.relevant, group: c.group};
    c.relevant = r.relevant; c.group = r.relevant === "1" ? r.group : "";
    return old;
  });
  if (!isUndo) S.undo.push({index: S.index, rows: before});
  render();
  send(S.index, rows);
}

function send(index, rows) {
  S.pending += 1;
  setStatus("saving…");
  S.queue = S.queue.then(() => api("/api/label", {changes: rows})).then(answer => {
    S.pending -= 1;
    S.overview.done = answer.progress.done;
    S.overview.queries[answer.query.index].done = answer.query.done;
    if (S.pending === 0 && S.index === answer.query.index) S.view = answer.query;
    render();
    if (S.pending === 0) setStatus("saved ✓");
  }, err => {
    S.pending -= 1;
    setStatus("not saved: " + err.message, true);
    openQuery(S.index);  // show what the server holds
  });
}

function toggle(k) {
  const c = candidate(k);
  if (c.relevant === "1") change([{row_id: c.row_id, relevant: "0", group: ""}]);
  else change([{row_id: c.row_id, relevant: "1", group: c.group || c.proposed_group || newGroup()}]);
}

function setGroup(k, g) {
  S.focus = k;
  change([{row_id: candidate(k).row_id, relevant: "1", group: g}]);
}

function notRelevant(k) {
  change([{row_id: candidate(k).row_id, relevant: "0", group: ""}]);
}

async function doneAndNext() {
  const rows = S.view.candidates.filter(c => c.relevant === "").map(c => ({row_id: c.row_id, relevant: "0", group: ""}));
  if (rows.length) change(rows);
  await S.queue;
  const order = S.overview.queries.map((_, i) => (S.index + 1 + i) % S.overview.total);
  const next = order.find(i => !S.overview.queries[i].done);
  if (next === undefined) setStatus("all " + S.overview.total + " queries done ✓");
  else await openQuery(next);
}

async function undo() {
  const entry = S.undo.pop();
  if (!entry) { setStatus("nothing to undo"); return; }
  if (entry.index !== S.index) await openQuery(entry.index);
  change(entry.rows, true);
  setStatus("undone");
}

function move(delta) {
  S.focus = Math.max(0, Math.min(S.view.candidates.length - 1, S.focus + delta));
  render();
}

const KEYS = {
  ArrowDown: () => move(1), j: () => move(1), ArrowUp: () => move(-1), k: () => move(-1),
  " ": () => toggle(S.focus), r: () => toggle(S.focus), x: () => notRelevant(S.focus), 0: () => notRelevant(S.focus),
  g: () => setGroup(S.focus, newGroup()), u: () => undo(), Enter: () => doneAndNext(),
  ArrowRight: () => openQuery(S.index + 1), "]": () => openQuery(S.index + 1),
  ArrowLeft: () => openQuery(S.index - 1), "[": () => openQuery(S.index - 1),
  "?": () => { const h = document.getElementById("help"); h.open = !h.open; },
};

document.addEventListener("keydown", event => {
  if (typingIn(event) || event.altKey || event.metaKey || !S.view) return;
  let action = null;
  if (event.ctrlKey) action = event.key === "z" ? () => undo() : null;
  else if (/^[1-9]$/.test(event.key)) action = () => setGroup(S.focus, event.key);
  else action = KEYS[event.key];
  if (!action) return;
  event.preventDefault();
  run(action);
});
// Buttons never keep the keyboard focus, so Enter and Space always reach the page's keys.
document.addEventListener("mousedown", event => { if (event.target.closest("button")) event.preventDefault(); });
document.getElementById("prev").addEventListener("click", () => run(() => openQuery(S.index - 1)));
document.getElementById("next").addEventListener("click", () => run(() => openQuery(S.index + 1)));
document.getElementById("done").addEventListener("click", () => run(doneAndNext));
document.getElementById("undo").addEventListener("click", () => run(undo));

(async function init() {
  try {
    S.overview = await api("/api/state");
    document.title = "LSDSCC annotation · " + S.overview.annotator;
    S.index = S.overview.resume;
    await openQuery(S.overview.resume);
    setStatus(S.overview.done ? "resumed" : "ready");
  } catch (err) {
    setStatus(err.message, true);
  }
})();
