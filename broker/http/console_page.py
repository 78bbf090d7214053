"""The read-only web console: one self-contained HTML page (no build step, no CDN).

The page's script fetches ``/api/cluster`` from the node that served it every few seconds and
renders brokers, the quorum, topics and partitions (under-replicated and offline ones
highlighted), consumer groups with their lag, and recent controller decisions; its header
links to the server-drawn views (console_views.py). Everything is
inserted as text nodes, so names from the metadata can never inject markup.
"""

from __future__ import annotations

REFRESH_MS = 3000

CONSOLE_HTML = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>rillet console</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 0; color: #1d2330; background: #f4f6f9; }
header { background: #1d3557; color: #fff; padding: 10px 20px; display: flex; gap: 24px;
  align-items: baseline; }
header h1 { font-size: 18px; margin: 0; }
header .meta { opacity: .85; font-size: 13px; }
header nav a { color: #fff; margin-right: 10px; }
main { padding: 12px 20px; display: grid; grid-template-columns: 1fr 1fr; gap: 14px; }
section { background: #fff; border: 1px solid #dde2ea; border-radius: 6px; padding: 8px 12px; }
section.wide { grid-column: 1 / -1; }
h2 { font-size: 15px; margin: 4px 0 8px; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 3px 8px; border-bottom: 1px solid #eef1f5; font-size: 13px; }
th { color: #5a6476; font-weight: 600; }
tr.bad td { background: #fde8e8; }
tr.warn td { background: #fff6dc; }
.tag { display: inline-block; padding: 0 6px; border-radius: 8px; font-size: 12px; }
.ok { background: #dcf5e3; color: #17602d; } .no { background: #fde0e0; color: #8a1c1c; }
#error { color: #8a1c1c; }
.muted { color: #8a93a3; }
</style>
</head>
<body>
<header><h1>rillet</h1><span class="meta" id="summary">loading...</span>
<span class="meta" id="error"></span>
<nav class="meta"><a href="/console/charts">charts</a> <a href="/console/browse">messages</a>
<a href="/console/configs">topic configs</a> <a href="/console/logdirs">log dirs</a></nav></header>
<main>
<section><h2>Brokers</h2><table id="brokers"><thead><tr><th>id</th><th>address</th>
<th>kafka port</th><th>epoch</th><th>applied index</th><th>state</th></tr></thead><tbody>
</tbody></table></section>
<section><h2>Raft quorum</h2><table id="quorum"><tbody></tbody></table></section>
<section class="wide"><h2>Topics and partitions</h2><table id="partitions"><thead><tr>
<th>topic</th><th>partition</th><th>leader</th><th>replicas</th><th>ISR</th>
<th>high watermark</th><th>state</th></tr></thead><tbody></tbody></table></section>
<section><h2>Consumer groups</h2><table id="groups"><thead><tr><th>group</th><th>members</th>
<th>assignment</th><th>lag</th></tr></thead><tbody></tbody></table></section>
<section><h2>Recent controller decisions</h2><table id="decisions"><thead><tr><th>index</th>
<th>term</th><th>decision</th></tr></thead><tbody></tbody></table></section>
</main>
<script>
"use strict";
const REFRESH_MS = __REFRESH_MS__;
function cell(row, text, cls) {
  const td = document.createElement("td");
  if (cls) { const s = document.createElement("span"); s.className = "tag " + cls;
    s.textContent = text; td.appendChild(s); } else { td.textContent = text; }
  row.appendChild(td); return td;
}
function body(id) { const b = document.querySelector("#" + id + " tbody");
  b.replaceChildren(); return b; }
function row(tbody, cls) { const r = document.createElement("tr");
  if (cls) r.className = cls; tbody.appendChild(r); return r; }
function show(d) {
  const q = d.quorum;
  document.getElementById("summary").textContent = "cluster " + d.cluster_id +
    " \u00b7 served by node " + d.node_id + " \u00b7 controller " + q.controller_id +
    " \u00b7 " + (d.ready ? "ready" : "not ready: " + d.not_ready_reason);
  let b = body("brokers");
  for (const x of d.brokers) {
    const r = row(b, x.fenced ? "bad" : "");
    r.dataset.broker = x.id;
    cell(r, x.id); cell(r, x.host + ":" + x.port); cell(r, x.kafka_port >= 0 ? x.kafka_port : "-");
    cell(r, x.epoch); cell(r, x.applied_index === null ? "?" : x.applied_index);
    cell(r, x.fenced ? "fenced" : "unfenced", x.fenced ? "no" : "ok");
  }
  b = body("quorum");
  const qrows = [["leader", q.leader_id], ["term", q.term], ["voters", (q.voters || []).join(", ")],
    ["commit index", q.commit_index], ["applied index (node " + d.node_id + ")", q.applied_index]];
  for (const [k, v] of qrows) { const r = row(b); cell(r, k);
    cell(r, v === undefined ? "- (node is not a voter)" : v); }
  b = body("partitions");
  for (const t of d.topics) for (const p of t.partitions) {
    const r = row(b, p.offline ? "bad" : (p.under_replicated ? "warn" : ""));
    r.dataset.topic = t.name; r.dataset.partition = p.partition;
    cell(r, t.name); cell(r, p.partition); cell(r, p.leader < 0 ? "none" : p.leader);
    cell(r, p.replicas.join(", ")); cell(r, p.isr.join(", "));
    cell(r, p.high_watermark === null ? "-" : p.high_watermark);
    if (p.offline) cell(r, "offline", "no");
    else if (p.under_replicated) cell(r, "under-replicated", "no");
    else cell(r, "in sync", "ok");
  }
  if (!d.topics.length) cell(row(b), "no topics yet").colSpan = 7;
  b = body("groups");
  for (const g of d.groups) {
    const r = row(b); cell(r, g.id + " (" + g.kind + ")");
    cell(r, g.members.map(m => m.id.slice(0, 12)).join(", ") || "-");
    cell(r, g.members.map(m => m.assignment.join(" ")).join(" | ") || "-");
    const total = g.lag.reduce((s, x) => s + (x.lag || 0), 0);
    cell(r, g.lag.map(x => x.topic + "-" + x.partition + ": " +
      (x.lag === null ? "?" : x.lag)).join(", ") + (g.lag.length ? " (total " + total + ")" : "-"));
  }
  if (!d.groups.length) cell(row(b), "no consumer groups").colSpan = 4;
  b = body("decisions");
  for (const x of d.decisions.slice(0, 15)) { const r = row(b); cell(r, x.index);
    cell(r, x.term); cell(r, x.text); }
}
async function refresh() {
  try {
    const resp = await fetch("/api/cluster", {cache: "no-store"});
    if (!resp.ok) throw new Error("HTTP " + resp.status);
    show(await resp.json());
    document.getElementById("error").textContent = "";
    document.body.dataset.loaded = "true";
  } catch (e) {
    document.getElementById("error").textContent = "node unreachable: " + e.message;
  }
}
refresh();
setInterval(refresh, REFRESH_MS);
</script>
</body>
</html>
""".replace("__REFRESH_MS__", str(REFRESH_MS))
