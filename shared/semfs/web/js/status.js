import { $, api, dateLabel, el } from "./core.js";

// ---- status: live while it is open (polled every 3 s)
export let statusTimer = null;
window.addEventListener("hashchange", () => { if (!location.hash.startsWith("#/status")) { clearInterval(statusTimer); statusTimer = null; } });
export async function loadStatus() {
  $("status-state").textContent = "";
  try {
    await renderStatus();
    $("status-updated").textContent = "updated " + new Date().toLocaleTimeString() + " · refreshes every 3 s";
  } catch (err) { $("status-state").textContent = String(err.message); clearInterval(statusTimer); statusTimer = null; return; }
  if (!statusTimer) statusTimer = setInterval(() => { if (!document.hidden) loadStatus(); }, 3000);
}
// The overview: what there is (documents, problems, the queue, the trash, each a link to its view), what
// arrived last, then the counts by status and outcome, the queue and the failed files
export async function renderTiles() {
  const [docs, problems, trashed, recent] = await Promise.all([
    api("GET", "/files/facets"), api("GET", "/files/facets?listing=problems"),
    api("GET", "/trash?limit=1"), api("GET", "/files?limit=5&sort=newest")]);
  const count = (f) => f.total.toLocaleString() + (f.capped ? "+" : "");
  $("tile-documents").textContent = count(docs); $("tile-problems").textContent = count(problems);
  $("tile-trash").textContent = trashed.total.toLocaleString();
  $("recent").replaceChildren(...(recent.files.length ? recent.files.map((f) => {
    const li = el("li"); const a = el("a", f.title || f.filename, "doc-title"); a.href = "#/file/" + encodeURIComponent(f.file_id);
    li.append(a, el("span", " " + [f.filename, dateLabel(f.created_at), f.came_from].filter(Boolean).join(" · "), "muted"));
    return li;
  }) : [el("li", "No files yet: upload some, or point semfs at a folder.", "muted")]));
}
export async function renderStatus() {
  await renderTiles();
  const data = await api("GET", "/status");
  $("status-table").tBodies[0].replaceChildren(...data.counts.map((c) => {
    const tr = el("tr"); tr.append(el("td", c.status), el("td", c.outcome || "-"), el("td", String(c.count))); return tr;
  }));
  const queue = await api("GET", "/jobs");
  $("tile-queue").textContent = queue.jobs.length.toLocaleString();
  if (!queue.jobs.length) $("jobs").replaceChildren(el("li", "Nothing is waiting: every file that arrived has been read.", "muted"));
  else $("jobs").replaceChildren(...queue.jobs.map((j) => {
    const li = el("li", j.filename + " — " + (j.state === "queued" ? "queued" : j.stage));
    if (j.state === "queued") {
      const b = el("button", "Cancel"); b.dataset.cancel = j.file_id;
      b.addEventListener("click", async () => { await api("POST", "/files/" + j.file_id + "/cancel"); loadStatus(); });
      li.append(" ", b);
    }
    return li;
  }));
  const failed = await api("GET", "/files?status=failed&limit=50");
  if (!failed.files.length) { $("failed").replaceChildren(el("li", "No file failed.", "muted")); return; }
  $("failed").replaceChildren(...failed.files.map((f) => {
    const li = el("li", f.filename + " — " + f.outcome + ": " + (f.error || "")); const b = el("button", "Retry");
    b.dataset.retry = f.file_id;
    b.addEventListener("click", async () => {
      b.disabled = true; b.textContent = "Retrying…";
      try { const r = await api("POST", "/files/" + f.file_id + "/retry"); li.firstChild.textContent = f.filename + " — " + r.status + "… "; }
      catch (err) { b.textContent = String(err.message); return; }
      loadStatus();
    });
    li.append(" ", b); return li;
  }));
}
