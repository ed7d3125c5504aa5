// semfs web page: plain DOM, every string from a document or a model is inserted as text (escaped).
"use strict";
const $ = (id) => document.getElementById(id);
const el = (tag, text, cls) => { const e = document.createElement(tag); if (text != null) e.textContent = text; if (cls) e.className = cls; return e; };
let currentFile = null;

function key() { return localStorage.getItem("semfs-key") || ""; }
async function api(method, path, body, raw) {
  const headers = { Authorization: "Bearer " + key() };
  let payload = raw;
  if (body !== undefined) { headers["Content-Type"] = "application/json"; payload = JSON.stringify(body); }
  const res = await fetch(path, { method, headers, body: payload });
  const data = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(res.status + ": " + ((data.error && data.error.message) || data.message || JSON.stringify(data)));
  return data;
}

function show(view) {
  document.querySelectorAll(".view").forEach((v) => v.classList.add("hidden"));
  $("view-" + view).classList.remove("hidden");
  document.querySelectorAll("nav button").forEach((b) => b.classList.toggle("active", b.dataset.view === view));
  if (view === "status") loadStatus();
}
document.querySelectorAll("nav button").forEach((b) => b.addEventListener("click", () => show(b.dataset.view)));

$("key-form").addEventListener("submit", (e) => {
  e.preventDefault(); localStorage.setItem("semfs-key", $("api-key").value.trim()); $("api-key").value = "";
  $("key-state").textContent = key() ? "key set" : "";
});
$("key-state").textContent = key() ? "key set" : "";

function snippetNode(s) {
  const p = el("p", null, "snippet"); let pos = 0;
  for (const [a, b] of s.highlights || []) { p.append(s.text.slice(pos, a), el("mark", s.text.slice(a, b))); pos = b; }
  p.append(s.text.slice(pos));
  p.append(el("span", "  (" + locationLabel(s.location) + ")", "muted"));
  return p;
}
function locationLabel(loc) {
  if (!loc) return "document";
  const parts = [];
  if (loc.page) parts.push("page " + loc.page);
  if (loc.sheet) parts.push("sheet " + loc.sheet + (loc.row_start ? " rows " + loc.row_start + "-" + (loc.row_end || loc.row_start) : ""));
  if (loc.slide) parts.push("slide " + loc.slide);
  if (loc.section) parts.push("§ " + loc.section);
  return parts.join(", ") || (loc.paragraph ? "paragraph " + loc.paragraph : "document");
}

$("search-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const tags = $("f-tags").value.split(",").map((t) => t.trim()).filter(Boolean);
  const filters = { tags, include_history: $("f-history").checked };
  for (const [field, id] of [["source_type", "f-source"], ["contact_id", "f-contact"], ["thread_id", "f-thread"],
                             ["mime_type", "f-mime"], ["date_from", "f-from"], ["date_to", "f-to"]]) {
    if ($(id).value) filters[field] = $(id).value;
  }
  $("search-state").textContent = "Searching…"; $("results").replaceChildren();
  try {
    const data = await api("POST", "/search", { query: $("q").value, mode: $("mode").value, limit: 20, filters });
    $("search-state").textContent = data.results.length + " result(s)" + (data.degraded ? " — keyword only (embeddings unavailable)" : "");
    for (const r of data.results) {
      const li = el("li"); const title = el("span", r.title || r.filename, "result-title");
      title.addEventListener("click", () => openFile(r.file_id));
      li.append(title, el("span", r.filename, "badge"), el("span", r.source_type, "badge"));
      if (!r.is_latest) li.append(el("span", "v" + r.version + " (older version)", "badge"));
      if (r.origin && r.origin.agent) li.append(el("span", "by " + r.origin.agent + (r.origin.run_id ? " · " + r.origin.run_id : ""), "badge"));
      if (r.origin && r.origin.sender) li.append(el("span", "from " + r.origin.sender, "badge"));
      if (r.summary) li.append(el("p", r.summary, "muted"));
      for (const s of r.snippets.slice(0, 2)) li.append(snippetNode(s));
      $("results").append(li);
    }
  } catch (err) { $("search-state").textContent = String(err); }
});

async function openFile(id, cite) {
  const f = await api("GET", "/files/" + encodeURIComponent(id));
  currentFile = f; show("file");
  $("file-title").textContent = f.title || f.filename;
  $("file-meta").textContent = f.filename + " · v" + f.version + " · " + f.mime_type + " · " + (f.outcome || f.status);
  $("file-summary").textContent = f.summary || "";
  renderTags(f);
  const prov = $("file-provenance"); prov.replaceChildren();
  for (const [k, v] of [["source", f.source_type], ["uploaded by", f.uploaded_by], ["context", f.upload_context],
                        ["thread", f.thread_id], ["contacts", (f.contact_ids || []).join(", ")],
                        ["from", (f.provenance || {}).sender], ["subject", (f.provenance || {}).subject],
                        ["agent", (f.provenance || {}).agent], ["created", f.created_at]]) {
    if (v) prov.append(el("dt", k), el("dd", v));
  }
  const versions = await api("GET", "/files/" + encodeURIComponent(id) + "/versions");
  $("file-versions").replaceChildren(...versions.versions.map((v) => {
    const li = el("li", "v" + v.version + " · " + v.filename + (v.is_latest ? " · latest" : ""));
    if (v.version > 1) {  // a wrongly linked version becomes a document of its own
      const b = el("button", "Not the same document: detach");
      b.dataset.detach = v.file_id;
      b.addEventListener("click", async () => { await api("POST", "/files/" + v.file_id + "/detach"); openFile(v.file_id); });
      li.append(" ", b);
    }
    if (v.change_summary) li.append(el("pre", v.change_summary, "muted"));
    return li;
  }));
  const text = await api("GET", "/files/" + encodeURIComponent(id) + "/text").catch(() => ({ blocks: [] }));
  $("file-text").replaceChildren(...text.blocks.slice(0, 200).map((b) => {
    const p = el("p", b.text); p.dataset.location = locationLabel(b.location); p.title = p.dataset.location; return p;
  }));
  if (cite) {  // a citation: show the cited place (the block holding the quote, else the cited page)
    const flat = (t) => t.replace(/\s+/g, " ").trim();
    const blocks = [...$("file-text").children];
    const target = blocks.find((p) => flat(p.textContent).includes(flat(cite.quote)))
      || blocks.find((p) => cite.location && cite.location.page && p.dataset.location.startsWith("page " + cite.location.page));
    if (target) { target.classList.add("cited"); target.scrollIntoView({ block: "center" }); }
  }
}
function renderTags(f) {
  $("file-tags").replaceChildren(...(f.tags || []).map((t) => {
    const span = el("span", (f.tag_labels || {})[t] || t, "tag"); const x = el("button", "×"); x.title = "remove " + t;
    x.addEventListener("click", async () => renderTags(await api("PATCH", "/files/" + f.file_id, { add_tags: [], remove_tags: [t] })));
    span.append(x); return span;
  }));
  $("auto-tags").textContent = "auto: " + (f.auto_tags || []).join(", ");
}
$("link-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const target = $("link-to").value.trim();
  if (!currentFile || !target) return;
  try {
    await api("POST", "/files/" + currentFile.file_id + "/link", { previous_version_id: target });
    $("link-to").value = ""; $("link-state").textContent = "";
    openFile(currentFile.file_id);
  } catch (err) { $("link-state").textContent = String(err); }
});
$("tag-form").addEventListener("submit", async (e) => {
  e.preventDefault(); const t = $("new-tag").value.trim(); if (!t || !currentFile) return;
  currentFile = await api("PATCH", "/files/" + currentFile.file_id, { add_tags: [t], remove_tags: [] });
  $("new-tag").value = ""; renderTags(currentFile);
});
$("back").addEventListener("click", () => show("search"));
$("download").addEventListener("click", async (e) => {
  e.preventDefault(); const link = await api("GET", "/files/" + currentFile.file_id + "/download"); window.location = link.url;
});

$("ask-form").addEventListener("submit", async (e) => {
  e.preventDefault(); $("answer").textContent = "Thinking…"; $("citations").replaceChildren();
  const data = await api("POST", "/ask", { question: $("question").value });
  if (data.status !== "answered") { $("answer").textContent = "No answer: " + data.reason; return; }
  $("answer").textContent = data.answer;
  for (const c of data.citations) {
    const li = el("li"); const a = el("a", "“" + c.quote + "”", "citation"); a.href = "#";
    a.addEventListener("click", (ev) => { ev.preventDefault(); openFile(c.file_id, c); });
    li.append(a, el("span", " — " + locationLabel(c.location), "muted")); $("citations").append(li);
  }
});

$("upload-form").addEventListener("submit", async (e) => {
  e.preventDefault(); const form = new FormData(); const file = $("upload-file").files[0];
  form.append("file", file, file.name);
  if ($("upload-previous").value) form.append("previous_version_id", $("upload-previous").value.trim());
  if ($("upload-tags").value) form.append("tags", $("upload-tags").value);
  $("upload-state").textContent = "Uploading…";
  try {
    let rec = await api("POST", "/files", undefined, form);
    const done = (r) => ["indexed", "failed", "skipped", "deleted"].includes(r.status);
    while (!done(rec)) {  // queued by semfs serve: follow it through the stages
      $("upload-state").textContent = rec.filename + ": " + rec.status + "…";
      await new Promise((ok) => setTimeout(ok, 500));
      rec = await api("GET", "/files/" + encodeURIComponent(rec.file_id));
    }
    $("upload-state").textContent = rec.filename + ": " + (rec.outcome || rec.status) + (rec.error ? " — " + rec.error : "") + " (" + rec.file_id + ")";
  } catch (err) { $("upload-state").textContent = String(err); }
});

async function loadStatus() {
  const data = await api("GET", "/status");
  $("status-table").tBodies[0].replaceChildren(...data.counts.map((c) => {
    const tr = el("tr"); tr.append(el("td", c.status), el("td", c.outcome || "-"), el("td", String(c.count))); return tr;
  }));
  const queue = await api("GET", "/jobs");
  $("jobs").replaceChildren(...queue.jobs.map((j) => {
    const li = el("li", j.filename + " — " + (j.state === "queued" ? "queued" : j.stage));
    if (j.state === "queued") {
      const b = el("button", "Cancel"); b.dataset.cancel = j.file_id;
      b.addEventListener("click", async () => { await api("POST", "/files/" + j.file_id + "/cancel"); loadStatus(); });
      li.append(" ", b);
    }
    return li;
  }));
  const failed = await api("GET", "/files?status=failed&limit=50");
  $("failed").replaceChildren(...failed.files.map((f) => {
    const li = el("li", f.filename + " — " + f.outcome + ": " + (f.error || "")); const b = el("button", "Retry");
    b.addEventListener("click", async () => { await api("POST", "/files/" + f.file_id + "/retry"); loadStatus(); });
    li.append(" ", b); return li;
  }));
}
