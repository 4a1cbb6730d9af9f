// Waypoint trace viewer: runs list, run page (graph, waterfall, expandable steps, live), chat box.
// Plain browser JavaScript, no dependencies and no build step. Data: /v1/runs, /v1/runs/{id}/spans,
// /v1/runs/{id}/events (SSE, read with fetch so the API key header can be sent), /v1/agent/graph.
"use strict";

const $ = (sel, root = document) => root.querySelector(sel);
const esc = (v) => String(v ?? "").replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
const fmtS = (s) => (s == null ? "–" : s < 1 ? `${Math.round(s * 1000)} ms` : `${s.toFixed(2)} s`);
const fmtPct = (x) => `${Math.round((x || 0) * 100)}%`;
const fmtTime = (t) => new Date(t * 1000).toLocaleString();

const ui = {
  key: localStorage.getItem("waypoint.key") || "",
  graph: null,
  expanded: new Set(),
  live: null, // {runId, abort}
  refreshTimer: null,
  listTimer: null,
  current: null, // the drawn run: {kids, t0, tEnd, byId}
};

function headers(extra = {}) {
  return ui.key ? { ...extra, Authorization: `Bearer ${ui.key}` } : extra;
}

async function api(path, opts = {}) {
  const res = await fetch(path, { ...opts, headers: headers(opts.headers || {}) });
  if (!res.ok) {
    let msg = `${res.status}`;
    try { msg = (await res.json()).error.message; } catch (_) { /* not JSON */ }
    throw new Error(msg);
  }
  return res.json();
}

function flash(msg) {
  const el = $("#flash");
  el.textContent = msg;
  el.hidden = !msg;
}

// ---- SSE over fetch: calls onEvent({event, id, data}) per message; resolves when the stream ends ----
async function readSSE(res, onEvent, signal) {
  const reader = res.body.getReader();
  const dec = new TextDecoder();
  let buf = "";
  while (!signal || !signal.aborted) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += dec.decode(value, { stream: true }).replace(/\r\n/g, "\n");
    let cut;
    while ((cut = buf.indexOf("\n\n")) >= 0) {
      const block = buf.slice(0, cut);
      buf = buf.slice(cut + 2);
      const msg = { event: "message", data: "" };
      for (const line of block.split("\n")) {
        if (!line || line.startsWith(":")) continue;
        const i = line.indexOf(":");
        const k = i < 0 ? line : line.slice(0, i);
        const v = i < 0 ? "" : line.slice(i + 1).replace(/^ /, "");
        if (k === "data") msg.data += (msg.data ? "\n" : "") + v;
        else msg[k] = v;
      }
      if (msg.data) onEvent(msg);
    }
  }
}

// ---- routing ----
function route() {
  stopLive();
  clearInterval(ui.listTimer);
  const m = location.hash.match(/^#\/run\/([^/?]+)/);
  if (m) return showRun(decodeURIComponent(m[1]));
  return showRuns();
}

// ---- runs list ----
async function showRuns(cursor = null, append = false) {
  const view = $("#view");
  const params = new URLSearchParams({ limit: "50" });
  const status = $("#f-status")?.value;
  const thread = $("#f-thread")?.value;
  const since = $("#f-since")?.value;
  if (since) params.set("since", String(new Date(since).getTime() / 1000));
  if (status) params.set("status", status);
  if (thread) params.set("thread_id", thread);
  if (cursor) params.set("cursor", cursor);
  let page;
  try {
    page = await api(`/v1/runs?${params}`);
  } catch (e) {
    view.innerHTML = `<p class="error">Cannot list runs: ${esc(e.message)}</p>`;
    return;
  }
  const rows = page.runs.map(runRow).join("");
  if (!append) {
    view.innerHTML = `
      <section class="runs">
        <div class="filters">
          <h1>Runs</h1>
          <label>status <select id="f-status">${["", "running", "ok", "not_found", "budget", "error", "cancelled", "interrupted"]
            .map((s) => `<option ${s === (status || "") ? "selected" : ""}>${s}</option>`).join("")}</select></label>
          <label>thread <input id="f-thread" value="${esc(thread || "")}" size="20"></label>
          <label>since <input id="f-since" type="datetime-local" value="${esc(since || "")}"></label>
          <button id="f-apply">Filter</button>
        </div>
        <table data-testid="runs-table"><thead><tr>
          <th>status</th><th>question</th><th>started</th><th>duration</th><th>LLM calls</th>
          <th>tokens (prompt / completion)</th><th>cached share</th></tr></thead>
          <tbody id="runs-body">${rows || ""}</tbody></table>
        ${rows ? "" : `<p class="empty" data-testid="no-runs">No runs yet: ask a question above.</p>`}
        <button id="more" ${page.next_cursor ? "" : "hidden"}>Load more</button>
      </section>`;
    $("#f-apply").onclick = () => showRuns();
    // a whole row opens its run (a delegated handler: the CSP forbids inline onclick attributes)
    $("#runs-body").onclick = (ev) => {
      const row = ev.target.closest(".run-row");
      if (row && !ev.target.closest("a")) location.hash = `#/run/${encodeURIComponent(row.dataset.runId)}`;
    };
  } else {
    $("#runs-body").insertAdjacentHTML("beforeend", rows);
  }
  const more = $("#more");
  more.hidden = !page.next_cursor;
  more.onclick = () => showRuns(page.next_cursor, true);
  if (!append && page.runs.some((r) => r.status === "running")) {
    ui.listTimer = setInterval(() => { if (!location.hash.startsWith("#/run/")) showRuns(); }, 3000);
  }
}

function runRow(r) {
  const dur = r.duration_s == null ? "running…" : fmtS(r.duration_s);
  return `<tr class="run-row" data-testid="run-row" data-run-id="${esc(r.run_id)}">
    <td><span class="badge s-${esc(r.status)}">${esc(r.status)}</span></td>
    <td class="q"><a href="#/run/${encodeURIComponent(r.run_id)}">${esc(r.question)}</a></td>
    <td>${esc(fmtTime(r.started_at))}</td><td>${dur}</td><td>${r.llm_calls}</td>
    <td>${r.prompt_tokens} / ${r.completion_tokens}</td><td>${fmtPct(r.cached_share)}</td></tr>`;
}

// ---- run page ----
async function showRun(runId) {
  const view = $("#view");
  view.innerHTML = `<section class="run" data-run-id="${esc(runId)}"><p>Loading run ${esc(runId)}…</p></section>`;
  try {
    if (!ui.graph) ui.graph = await api("/v1/agent/graph");
  } catch (e) {
    ui.graph = { nodes: [], edges: [] };
  }
  const data = await loadRun(runId);
  if (data && data.run.status === "running") startLive(runId);
}

async function loadRun(runId) {
  let data;
  try {
    data = await api(`/v1/runs/${encodeURIComponent(runId)}/spans`);
  } catch (e) {
    $("#view").innerHTML = `<p class="error" data-testid="run-error">Run ${esc(runId)}: ${esc(e.message)}</p>`;
    return null;
  }
  if (!location.hash.includes(encodeURIComponent(runId)) && !location.hash.includes(runId)) return null;
  renderRun(data);
  return data;
}

function startLive(runId) {
  stopLive();
  const ctrl = new AbortController();
  ui.live = { runId, abort: ctrl };
  const after = -1;
  fetch(`/v1/runs/${encodeURIComponent(runId)}/events?after=${after}`, { headers: headers(), signal: ctrl.signal })
    .then((res) => readSSE(res, (msg) => {
      if (ui.live?.runId !== runId) return;
      scheduleRefresh(runId, msg.event === "done" ? 0 : 150);
    }, ctrl.signal))
    .catch(() => {})
    .finally(() => { if (ui.live?.runId === runId) scheduleRefresh(runId, 0); });
}

function stopLive() {
  if (ui.live) ui.live.abort.abort();
  ui.live = null;
  clearTimeout(ui.refreshTimer);
  ui.refreshTimer = null;
}

function scheduleRefresh(runId, delay) {
  if (ui.refreshTimer && delay > 0) return;
  clearTimeout(ui.refreshTimer);
  ui.refreshTimer = setTimeout(() => { ui.refreshTimer = null; loadRun(runId); }, delay);
}

function renderRun(data) {
  const { run, trace } = data;
  const root = trace.spans.find((s) => s.kind === "run");
  const u = trace.usage;
  const t0 = root ? root.start : run.started_at;
  const tEnd = Math.max(t0 + 0.001, ...trace.spans.map((s) => s.end ?? s.start), run.ended_at ?? 0, run.status === "running" ? Date.now() / 1000 : 0);
  const share = u.prompt_tokens ? u.cached_tokens / u.prompt_tokens : 0;
  const kids = new Map();
  for (const s of trace.spans) {
    if (!s.parent_id) continue;
    if (!kids.has(s.parent_id)) kids.set(s.parent_id, []);
    kids.get(s.parent_id).push(s);
  }
  const steps = kids.get("run") || [];
  const live = run.status === "running";
  $("#view").innerHTML = `
    <section class="run" data-run-id="${esc(run.run_id)}">
      <p><a href="#/">← runs</a></p>
      <h1 data-testid="run-question">${esc(run.question)}</h1>
      <div class="facts">
        <span class="badge s-${esc(run.status)}" data-testid="run-status">${esc(run.status)}</span>
        ${live ? `<span class="live" data-testid="live">● live</span>` : ""}
        <span>duration ${fmtS(run.ended_at ? run.ended_at - run.started_at : null)}</span>
        <span data-testid="run-llm-calls">LLM calls ${u.llm_calls}</span>
        <span>prompt ${u.prompt_tokens} · cached ${u.cached_tokens} · completion ${u.completion_tokens}</span>
        <span data-testid="run-cached-share">cached share ${fmtPct(share)}</span>
        <span>thread <code>${esc(run.thread_id || "–")}</code></span>
      </div>
      ${answerBox(run, steps, root)}
      <h2>Agent graph</h2>
      ${graphSvg(ui.graph, trace.path)}
      <h2>Steps <small>${trace.spans.length} spans</small></h2>
      <div class="waterfall" data-testid="waterfall">
        <div class="axis"><span>0</span><span>${fmtS(tEnd - t0)}</span></div>
        ${steps.map((s) => spanBlock(s, kids, t0, tEnd)).join("")}
      </div>
    </section>`;
  placeBars($("#view"));
  ui.current = { kids, t0, tEnd, byId: new Map(trace.spans.map((s) => [s.id, s])) };
  $(".waterfall").onclick = toggle;
}

// Details and children of a span are drawn when it is first opened (keeps big runs fast to draw).
function toggle(ev) {
  const row = ev.target.closest("[data-toggle]");
  if (!row) return;
  const id = row.dataset.toggle;
  const box = row.closest(".span");
  if (ui.expanded.has(id)) ui.expanded.delete(id); else ui.expanded.add(id);
  const det = box.querySelector(":scope > .detail");
  if (ui.expanded.has(id) && !det.dataset.filled) {
    const { kids, t0, tEnd, byId } = ui.current;
    det.innerHTML = inner(byId.get(id), kids, t0, tEnd);
    placeBars(det);
    det.dataset.filled = "1";
  }
  box.classList.toggle("open", ui.expanded.has(id));
}

function inner(s, kids, t0, tEnd) {
  return detail(s) + childGroups(kids.get(s.id) || [], kids, t0, tEnd);
}

// The verifier's verdict on the final answer (the answer event's ``verified``: true, false or null).
const VERDICTS = new Map([
  [true, ["v-ok", "verified against its citations"]],
  [false, ["v-doubt", "not verified: the verifier doubted a claim and the repair found nothing better"]],
]);

function verdict(root) {
  const attrs = (root && root.attributes) || {};
  if (!("verified" in attrs) || attrs.not_found) return "";
  const [cls, text] = VERDICTS.get(attrs.verified) || ["v-none", "not checked by the verifier"];
  return `<p class="verdict ${cls}" data-testid="run-verdict">${esc(text)}</p>`;
}

function answerBox(run, steps, root) {
  if (run.answer) {
    return `<div class="answer" data-testid="run-answer"><h2>Answer</h2><p>${esc(run.answer)}</p>${verdict(root)}${citations(run.citations)}</div>`;
  }
  const streaming = [...steps].reverse().find((s) => s.attributes.output);
  if (!streaming) return "";
  return `<div class="answer streaming" data-testid="run-answer-streaming"><h2>Answer (streaming)</h2><p>${esc(streaming.attributes.output)}</p></div>`;
}

function citations(cs) {
  if (!cs || !cs.length) return "";
  return `<ul class="cites">${cs.map((c) => `<li><code>${esc(c.id)}</code> ${esc(c.title || c.doc_id)}</li>`).join("")}</ul>`;
}

function bar(s, t0, tEnd) {
  const total = tEnd - t0;
  const left = Math.max(0, ((s.start - t0) / total) * 100);
  const end = s.end ?? tEnd;
  const width = Math.max(0.4, ((end - s.start) / total) * 100);
  return `<div class="track"><div class="bar k-${s.kind} st-${s.status}" data-left="${left.toFixed(2)}" data-width="${Math.min(width, 100 - left).toFixed(2)}"></div></div>`;
}

// The page's Content-Security-Policy forbids inline style attributes: bars are placed through the CSSOM.
function placeBars(root) {
  for (const el of root.querySelectorAll(".bar[data-left]")) {
    el.style.left = `${el.dataset.left}%`;
    el.style.width = `${el.dataset.width}%`;
  }
}

function label(s) {
  const a = s.attributes;
  switch (s.kind) {
    case "step": return `<b>${esc(s.name)}</b> <small>#${esc(a.step ?? "")}</small>`;
    case "llm": return `LLM · ${esc(s.name)} <small class="tokens" data-testid="llm-tokens-inline">${a.prompt_tokens}→${a.completion_tokens} tok, ${a.cached_tokens} cached</small>`;
    case "tool": return `tool · ${esc(s.name)} <small>${esc(a.query ?? "")}</small>`;
    case "grade": return `grade <small>kept ${a.kept} / ${(a.items || []).length}</small>`;
    case "compaction": return `compaction <small>${(a.replaced_ids || []).length} replaced</small>`;
    case "route": return `route · ${esc((a.tools || []).join(" + ") || "no tool")} <small data-testid="route-reason">${esc(a.source ?? "")}: ${esc(a.reason ?? "")}</small>`;
    case "correction": return `<span class="correction">correction · ${esc(a.action ?? s.name)}</span> <small data-testid="correction-reason">${esc(a.reason ?? "")}</small>`;
    case "error": return `<span class="error">error · ${esc(s.name)}</span>`;
    default: return esc(s.name);
  }
}

function spanBlock(s, kids, t0, tEnd) {
  const open = ui.expanded.has(s.id) ? " open" : "";
  const dur = s.end == null ? "…" : fmtS(s.end - s.start);
  const err = s.error ? `<div class="error inplace" data-testid="span-error">${esc(s.error)}</div>` : "";
  const failed = (kids.get(s.id) || []).filter((c) => c.status === "error").length;
  const flag = failed ? ` <span class="error" data-testid="child-errors">⚠ ${failed} failed</span>` : "";
  return `<div class="span kind-${s.kind} st-${s.status}${open}" data-testid="span-${s.kind}" data-span-id="${esc(s.id)}" data-node="${esc(s.name)}">
    <div class="row" data-toggle="${esc(s.id)}"><span class="name">${label(s)}${flag}</span><span class="dur">${dur}</span>${bar(s, t0, tEnd)}</div>
    ${err}
    <div class="detail"${open ? ' data-filled="1"' : ""}>${open ? inner(s, kids, t0, tEnd) : ""}</div>
  </div>`;
}

// Tool calls of one step that overlap in time are drawn side by side.
function childGroups(children, kids, t0, tEnd) {
  const out = [];
  let group = [];
  const flush = () => {
    if (group.length > 1) out.push(`<div class="parallel" data-testid="parallel"><small>parallel</small>${group.map((c) => spanBlock(c, kids, t0, tEnd)).join("")}</div>`);
    else if (group.length) out.push(spanBlock(group[0], kids, t0, tEnd));
    group = [];
  };
  for (const c of children) {
    const overlaps = group.length && c.kind === "tool" && group.every((g) => g.kind === "tool" && c.start < (g.end ?? tEnd) && g.start < (c.end ?? tEnd));
    if (!overlaps) flush();
    group.push(c);
  }
  flush();
  return out.join("");
}

function kv(pairs) {
  return `<dl>${pairs.filter(([, v]) => v !== undefined && v !== null && v !== "").map(([k, v]) => `<dt>${esc(k)}</dt><dd>${v}</dd>`).join("")}</dl>`;
}

function detail(s) {
  const a = s.attributes;
  switch (s.kind) {
    case "step":
      return kv([["summary", `<pre>${esc(JSON.stringify(a.summary ?? {}, null, 1))}</pre>`], ["output", a.output ? `<pre>${esc(a.output)}</pre>` : ""]]);
    case "llm":
      return `<div class="llm-tokens" data-testid="llm-tokens">${kv([
        ["role", esc(a.role)], ["model", esc(a.model)], ["prompt tokens", a.prompt_tokens], ["cached tokens", a.cached_tokens],
        ["completion tokens", a.completion_tokens], ["cached share", fmtPct(a.prompt_tokens ? a.cached_tokens / a.prompt_tokens : 0)],
        ["time to first token", fmtS(a.ttft_s)], ["latency", fmtS(a.latency_s)]])}</div>` +
        (a.prompt ? `<details class="llm-prompt" data-testid="llm-prompt"><summary>prompt</summary>${a.prompt
          .map((m) => `<div class="msg"><b>${esc(m.role)}</b><pre>${esc(m.content)}</pre></div>`).join("")}</details>` : "") +
        (a.output != null ? `<details class="llm-output" open><summary>output</summary><pre>${esc(a.output)}</pre></details>` : "");
    case "tool":
      return kv([["query", esc(a.query)], ["reason", esc(a.reason)], ["results", a.n_results]]) + evidenceTable(a.evidence || []);
    case "grade":
      return `<table class="ev"><tr><th>evidence</th><th>relevant</th><th>score</th></tr>${(a.items || [])
        .map((g) => `<tr class="${g.relevant ? "kept" : "dropped"}"><td><code>${esc(g.id)}</code></td><td>${g.relevant ? "yes" : "no"}</td><td>${g.score.toFixed(2)}</td></tr>`).join("")}</table>`;
    case "route":
      return kv([["step", esc(String((a.subq_index ?? 0) + 1) + ". " + (a.subq ?? ""))], ["tools", esc((a.tools || []).join(", "))],
        ["query", esc(a.query)], ["reason", esc(a.reason)], ["decided by", esc(a.source)], ["attempt", a.attempt]]);
    case "correction":
      return kv([["step", (a.subq_index ?? 0) + 1], ["action", esc(a.action)], ["reason", esc(a.reason)],
        ["tools", esc((a.tools || []).join(", "))], ["query", esc(a.query)]]);
    case "compaction":
      return kv([["note", `<pre>${esc(a.note)}</pre>`], ["replaced", esc((a.replaced_ids || []).join(", "))]]);
    case "error":
      return kv([["recoverable", a.recoverable ? "yes" : "no"]]);
    default:
      return "";
  }
}

function evidenceTable(items) {
  if (!items.length) return "";
  return `<table class="ev" data-testid="evidence"><tr><th>id</th><th>title</th><th>score</th><th>grade</th><th>why</th><th>text</th></tr>${items
    .map((e) => `<tr class="${e.grade ? (e.grade.relevant ? "kept" : "dropped") : ""}"><td><code>${esc(e.id)}</code></td><td>${esc(e.title)}</td>
      <td>${Number(e.score).toFixed(3)}</td><td>${e.grade ? (e.grade.relevant ? "kept" : "dropped") + " " + e.grade.score.toFixed(2) : "–"}</td>
      <td class="why" data-testid="evidence-why">${esc(String(e.reason ?? "").slice(0, 200))}</td><td class="text">${esc(String(e.text).slice(0, 300))}</td></tr>`).join("")}</table>`;
}

// ---- agent graph: nodes in a row, forward edges arc above, back edges below; the run's path highlighted ----
function graphSvg(graph, path) {
  const nodes = graph.nodes;
  if (!nodes.length) return "";
  const W = 96, X0 = 50, Y = 90;
  const x = (n) => X0 + nodes.indexOf(n) * W;
  const visits = {};
  for (const n of path) visits[n] = (visits[n] || 0) + 1;
  const taken = {};
  for (let i = 1; i < path.length; i++) taken[`${path[i - 1]}>${path[i]}`] = (taken[`${path[i - 1]}>${path[i]}`] || 0) + 1;
  const last = path[path.length - 1];
  const edges = graph.edges.filter(([a, b]) => nodes.includes(a) && nodes.includes(b)).map(([a, b]) => {
    const x1 = x(a), x2 = x(b), d = nodes.indexOf(b) - nodes.indexOf(a);
    const lift = Math.abs(d) === 1 ? 0 : (d > 0 ? -1 : 1) * (18 + 12 * Math.abs(d));
    const y = Y + (d > 0 ? -14 : 14) * (Math.abs(d) === 1 ? 0 : 1);
    const n = taken[`${a}>${b}`] || 0;
    return `<path class="edge${n ? " taken" : ""}" data-edge="${a}>${b}" d="M${x1},${y} Q${(x1 + x2) / 2},${y + lift * 1.6} ${x2},${y}" marker-end="url(#arrow${n ? "-t" : ""})"/>` +
      (n > 1 ? `<text class="count" x="${(x1 + x2) / 2}" y="${lift ? y + lift * 0.8 + 4 : y - 17}">×${n}</text>` : "");
  }).join("");
  const circles = nodes.map((n) => `<g class="node${visits[n] ? " visited" : ""}${n === last ? " current" : ""}" data-node="${n}">
    <rect x="${x(n) - 40}" y="${Y - 14}" width="80" height="28" rx="14"/><text x="${x(n)}" y="${Y + 4}">${n}${visits[n] > 1 ? " ×" + visits[n] : ""}</text></g>`).join("");
  const width = X0 * 2 + (nodes.length - 1) * W;
  return `<svg class="graph" data-testid="agent-graph" viewBox="0 0 ${width} 180" width="${width}" height="180">
    <defs><marker id="arrow" viewBox="0 0 8 8" refX="8" refY="4" markerWidth="6" markerHeight="6" orient="auto"><path d="M0,0 L8,4 L0,8 z" class="ah"/></marker>
    <marker id="arrow-t" viewBox="0 0 8 8" refX="8" refY="4" markerWidth="6" markerHeight="6" orient="auto"><path d="M0,0 L8,4 L0,8 z" class="ah-t"/></marker></defs>
    ${edges}${circles}</svg>`;
}

// ---- chat box: start a run, open its trace; keep reading the chat stream so the run goes on ----
async function ask(message) {
  flash("");
  let res;
  try {
    res = await fetch("/v1/chat", {
      method: "POST",
      headers: headers({ "Content-Type": "application/json", Accept: "text/event-stream" }),
      body: JSON.stringify({ message }),
    });
  } catch (e) {
    flash(`Cannot start the run: ${e.message}`);
    return;
  }
  if (!res.ok) {
    let msg = `${res.status}`;
    try { msg = (await res.json()).error.message; } catch (_) { /* not JSON */ }
    flash(`Cannot start the run: ${msg}`);
    return;
  }
  const runId = res.headers.get("X-Run-Id");
  if (runId) location.hash = `#/run/${encodeURIComponent(runId)}`;
  readSSE(res, () => {}).catch(() => {}); // the run stops if nobody reads its stream
}

function init() {
  $("#api-key").value = ui.key;
  $("#api-key").onchange = (e) => {
    ui.key = e.target.value.trim();
    localStorage.setItem("waypoint.key", ui.key);
    route();
  };
  $("#chat").onsubmit = (e) => {
    e.preventDefault();
    const input = $("#chat-input");
    const q = input.value.trim();
    if (q) { input.value = ""; ask(q); }
  };
  window.addEventListener("hashchange", route);
  route();
}

init();
