import { $, SOURCES, api, dateLabel, dayLabel, el, notice, off, outcomeLabel, sizeLabel, stale, state, typeLabel } from "./core.js";
import { fileEntities } from "./entities.js";
import { loadPeople, mayChange } from "./people.js";
import { restoreFile } from "./problems.js";
import { go, show } from "./router.js";
import { locationLabel } from "./search.js";

export function openFile(id, cite) { state.pendingCite = cite || null; go("file/" + encodeURIComponent(id)); }
// The file view shows one file: the one its address names. Before anything loads, and whenever that
// fails, nothing of a file seen before stays on it, and no action can reach one (issue 31: after a
// link to a missing id, Delete… stayed on screen and deleted the file viewed before).
export function clearFile() {
  state.currentFile = null;
  $("file-loaded").classList.add("hidden");
  ["file-title", "file-meta", "file-summary", "auto-tags", "file-state", "link-state", "note-state", "file-owner", "share-state"].forEach((id) => { $(id).textContent = ""; });
  ["file-tags", "file-entities", "file-notes", "file-history", "file-provenance", "file-versions", "file-similar", "preview", "file-text",
    "file-readers", "file-links"].forEach((id) => $(id).replaceChildren());
  $("new-note").value = ""; $("link-url").value = "";
  ["share-form", "share-links", "link-made"].forEach((id) => $(id).classList.add("hidden"));
}
export async function loadFile(id) {
  const cite = state.pendingCite; state.pendingCite = null;
  show("file"); clearFile();
  $("file-title").textContent = "Opening…";
  /** @type {import("./core.js").FileOut} */
  let f;
  const mine = state.renders;
  try { f = await api("GET", "/files/" + encodeURIComponent(id)); }
  catch (err) {
    if (stale(mine)) return;
    $("file-title").textContent = err.status === 404 ? "File not found" : "This file could not be opened";
    if (err.status !== 404) { $("file-state").textContent = String(err.message); return; }
    const list = el("a", "Documents"); list.href = "#/documents";
    const bin = el("a", "Trash"); bin.href = "#/trash";
    $("file-state").append("There is no file at this address: it was deleted, or the link is incomplete. ", list,
      " lists every file; a file deleted lately waits in the ", bin, ".");
    return;
  }
  if (stale(mine)) return;
  state.currentFile = f;
  $("file-loaded").classList.remove("hidden");
  $("file-title").textContent = f.title || f.filename;
  $("file-meta").textContent = [f.filename, "v" + f.version, typeLabel(f.mime_type), sizeLabel(f.size_bytes),
    dateLabel(f.created_at), outcomeLabel(f)].filter(Boolean).join(" · ");
  $("file-summary").textContent = f.summary || "";
  renderTags(f);
  renderNotes(f);
  loadHistory(f, mine);
  renderSharing(f, mine);
  const prov = $("file-provenance"); prov.replaceChildren();
  const filtered = (label, param, value) => {  // a link to every file of that thread / contact
    const a = el("a", label); a.href = "#/documents?" + new URLSearchParams({ [param]: value }).toString(); return a;
  };
  if (f.thread_id) {
    const dd = el("dd"); dd.append(filtered(f.thread_subject || "every file of this thread", "thread", f.thread_id));
    prov.append(el("dt", "thread"), dd);
  }
  if ((f.contact_ids || []).length) {
    const dd = el("dd");
    (f.contact_ids || []).forEach((cid, i) => { if (i) dd.append(", "); dd.append(filtered((f.contact_names || {})[cid] || cid, "contact", cid)); });
    prov.append(el("dt", "contacts"), dd);
  }
  for (const [k, v] of [["came from", f.came_from], ["source", SOURCES[f.source_type] || f.source_type], ["uploaded by", f.uploaded_by], ["context", f.upload_context],
                        ["from", (f.provenance || {}).sender], ["subject", (f.provenance || {}).subject],
                        ["agent", (f.provenance || {}).agent], ["created", dateLabel(f.created_at)]]) {
    if (v) prov.append(el("dt", k), el("dd", v));
  }
  const versions = await api("GET", "/files/" + encodeURIComponent(id) + "/versions").catch(() => ({ versions: [] }));
  if (stale(mine)) return;  // another address opened meanwhile: its own load draws the view
  $("file-versions").replaceChildren(...versions.versions.map((v) => {
    const li = el("li");
    if (v.file_id === f.file_id) li.append("v" + v.version + " · " + v.filename + (v.is_latest ? " · latest" : ""));
    else { const a = el("a", "v" + v.version + " · " + v.filename + (v.is_latest ? " · latest" : "")); a.href = "#/file/" + encodeURIComponent(v.file_id); li.append(a); }
    if (v.version > 1) {  // a wrongly linked version becomes a document of its own
      const b = el("button", "Not the same document: detach");
      b.dataset.detach = v.file_id;
      b.addEventListener("click", async () => { await api("POST", "/files/" + v.file_id + "/detach"); openFile(v.file_id); });
      li.append(" ", b);
    }
    if (v.change_summary) li.append(el("pre", v.change_summary, "muted"));
    return li;
  }));
  preview(f, cite);
  similarTo(f, mine);
  fileEntities(f, mine);
  const text = await api("GET", "/files/" + encodeURIComponent(id) + "/text").catch(() => ({ blocks: [] }));
  if (stale(mine)) return;
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
export async function similarTo(f, mine) {
  // more like this: nearest files by meaning, from the file's stored vectors (its own versions left out)
  const near = f.status === "indexed" && !off("semantic")
    ? await api("GET", "/files/" + encodeURIComponent(f.file_id) + "/similar?limit=5").catch(() => ({ files: [] }))
    : { files: [] };
  if (stale(mine)) return;
  $("file-similar").replaceChildren(...(near.files.length ? near.files.map((s) => {
    const li = el("li"); const a = el("a", s.title || s.filename); a.href = "#/file/" + encodeURIComponent(s.file_id);
    li.append(a, el("span", " " + s.filename + (s.came_from ? " · " + s.came_from : ""), "muted"));
    return li;
  }) : [el("li", "No other file is like this one.", "muted")]));
}
export async function preview(f, cite) {
  const box = $("preview"); box.replaceChildren();
  const inline = (f.mime_type === "application/pdf" || /^image\/(png|jpeg|gif|webp)$/.test(f.mime_type))
    && !/\.(gz|bz2|xz)$/i.test(f.filename);  // a compressed original is typed by what it holds
  if (!inline) return;  // the extracted text beside it is the view of every other format
  // a link made to be shown (in S3 the signature covers it: a parameter added to it afterwards breaks it)
  const link = await api("GET", "/files/" + encodeURIComponent(f.file_id) + "/download?inline=true").catch(() => null);
  if (!link || !state.currentFile || state.currentFile.file_id !== f.file_id) return;
  const url = link.url;
  if (f.mime_type === "application/pdf") {
    // the viewer opens on the page, without its thumbnail sidebar (half of a half-width pane)
    // a citation opens the viewer on its page
    const page = cite && cite.location && cite.location.page ? "page=" + encodeURIComponent(cite.location.page) + "&" : "";
    const frame = el("iframe"); frame.src = url + "#" + page + "navpanes=0&pagemode=none&view=FitH"; frame.title = "Preview of " + f.filename; box.append(frame);
  } else {
    const img = el("img"); img.src = url; img.alt = "Preview of " + f.filename; box.append(img);
  }
}
$("delete-file").addEventListener("click", async () => {
  // the file shown now (clearFile empties it before every load): the one named, confirmed and deleted
  const f = state.currentFile;
  if (!f) return;
  if (!window.confirm("Move “" + f.filename + "” to the trash? It leaves search at once; you can restore it from the Trash.")) return;
  try {
    const done = await api("DELETE", "/files/" + encodeURIComponent(f.file_id));
    notice("“" + f.filename + "” is in the trash" + (done.purge_on ? " until " + dayLabel(done.purge_on) : "") + ".",
           done.in_trash ? ["Undo", () => restoreFile(f.file_id, f.filename, "documents")] : null, { carry: true, focus: true });
    go("documents");
  } catch (err) { $("file-state").textContent = String(err.message); }
});
export function renderTags(f) {
  $("file-tags").replaceChildren(...(f.tags || []).map((t) => {
    const span = el("span", (f.tag_labels || {})[t] || t, "tag"); const x = el("button", "×"); x.title = "remove " + t;
    x.addEventListener("click", async () => tagsChanged(f.file_id, await api("PATCH", "/files/" + f.file_id, { add_tags: [], remove_tags: [t] })));
    span.append(x); return span;
  }));
  $("auto-tags").textContent = "auto: " + (f.auto_tags || []).join(", ");
}
// Notes: each with who wrote it and when; removing one names it. Every action carries the id of the file
// it was drawn for, so a note never lands on a file another address opened meanwhile.
export function renderNotes(f) {
  const notes = f.notes || [];
  $("file-notes").replaceChildren(...(notes.length ? notes.map((n) => {
    const li = el("li");
    li.append(el("p", n.text, "note-text"), el("span", [n.author || "unsigned", dateLabel(n.at)].join(" · "), "muted"));
    const x = el("button", "Remove"); x.type = "button"; x.setAttribute("aria-label", "Remove the note “" + n.text.slice(0, 40) + "”");
    x.addEventListener("click", async () => {
      try { noteChanged(f.file_id, await api("DELETE", "/files/" + encodeURIComponent(f.file_id) + "/notes/" + encodeURIComponent(n.note_id))); }
      catch (err) { $("note-state").textContent = String(err.message); }
    });
    li.append(" ", x); return li;
  }) : [el("li", "No notes yet.", "muted")]));
}
export function noteChanged(fileId, f) {
  if (!state.currentFile || state.currentFile.file_id !== fileId) return;  // another file is on screen now
  state.currentFile = f; $("note-state").textContent = ""; renderNotes(f); loadHistory(f, state.renders);
}
export async function loadHistory(f, mine) {
  const data = await api("GET", "/files/" + encodeURIComponent(f.file_id) + "/history").catch(() => ({ entries: [] }));
  if (stale(mine) || !state.currentFile || state.currentFile.file_id !== f.file_id) return;
  const words = { received: "Received", versioned: "New version", processed: "Processed", tagged: "Tagged", untagged: "Tag removed",
    noted: "Note added", unnoted: "Note removed", trashed: "Moved to the trash", restored: "Restored", detached: "Detached", linked: "Linked",
    shared: "Shared with", unshared: "No longer shared with" };
  $("file-history").replaceChildren(...data.entries.map((e) => {
    const li = el("li");
    li.append(el("span", dateLabel(e.at), "muted"), " ", el("strong", words[e.action] || e.action), e.detail ? " " + e.detail : "");
    if (e.by) li.append(el("span", " · " + e.by, "muted"));
    return li;
  }));
}
$("note-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const text = $("new-note").value.trim();
  if (!state.currentFile || !text) return;
  const fileId = state.currentFile.file_id;
  try {
    const f = await api("POST", "/files/" + encodeURIComponent(fileId) + "/notes", { text });
    if (state.currentFile && state.currentFile.file_id === fileId) $("new-note").value = "";
    noteChanged(fileId, f);
  } catch (err) { $("note-state").textContent = String(err.message); }
});
// the earlier version is picked by its name: the documents' names are offered as the field is used, and
// the one chosen is sent by its id (an id pasted in still works)
export let linkNames = new Map();
$("link-to").addEventListener("focus", async () => {
  if (!state.currentFile) return;
  const fileId = state.currentFile.file_id;
  const page = await api("GET", "/files?limit=200&sort=name").catch(() => ({ files: [] }));
  if (!state.currentFile || state.currentFile.file_id !== fileId) return;
  linkNames = new Map();
  for (const f of page.files) {
    if (f.file_id === fileId || f.lineage_id === state.currentFile.lineage_id) continue;
    let label = (f.title && f.title !== f.filename ? f.title + " — " : "") + f.filename;
    if (linkNames.has(label)) label += " (" + dateLabel(f.created_at) + ")";
    linkNames.set(label, f.file_id);
  }
  $("link-names").replaceChildren(...[...linkNames.keys()].map((label) => { const o = el("option"); o.value = label; return o; }));
});
$("link-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const typed = $("link-to").value.trim();
  const target = linkNames.get(typed) || (/^f_[0-9a-f]+$/.test(typed) ? typed : "");
  if (state.currentFile && typed && !target) { $("link-state").textContent = "Pick the earlier file from the list (start typing its name), or paste its id."; return; }
  if (!state.currentFile || !target) return;
  try {
    await api("POST", "/files/" + state.currentFile.file_id + "/link", { previous_version_id: target });
    $("link-to").value = ""; $("link-state").textContent = "";
    openFile(state.currentFile.file_id);
  } catch (err) { $("link-state").textContent = String(err.message); }
});
$("tag-form").addEventListener("submit", async (e) => {
  e.preventDefault(); const t = $("new-tag").value.trim(); if (!t || !state.currentFile) return;
  const fileId = state.currentFile.file_id;
  const f = await api("PATCH", "/files/" + fileId, { add_tags: [t], remove_tags: [] });
  if (state.currentFile && state.currentFile.file_id === fileId) $("new-tag").value = "";
  tagsChanged(fileId, f);
});
// a tag added or removed shows in the tags and in the history at once (the history waited for a reload)
export function tagsChanged(fileId, f) {
  if (!state.currentFile || state.currentFile.file_id !== fileId) return;  // another file is on screen now
  state.currentFile = f; renderTags(f); loadHistory(f, state.renders);
}
// Sharing: who reads the file (its owner, the users and groups it is shared with, or everyone here), and for
// its owner or an admin, the controls to share it, stop sharing it, and make or revoke links anyone can open
const readerWords = (t) => t === "tenant" ? "everyone here" : t === "admins" ? "the tenant's admins"
  : t.startsWith("u:") ? "user " + t.slice(2) : t.startsWith("g:") ? "group " + t.slice(2) : t;
export async function renderSharing(f, mine) {
  const people = await loadPeople();
  if (stale(mine) || !state.currentFile || state.currentFile.file_id !== f.file_id) return;
  const changeable = mayChange(f);
  const readers = f.readers && f.readers.length ? f.readers : ["tenant"];
  $("file-owner").textContent = f.owner ? "Owned by " + f.owner + ". Read by:" : "Nobody owns it. Read by:";
  $("file-readers").replaceChildren(...readers.map((t) => {
    const li = el("li", readerWords(t) + (f.owner && t === "u:" + f.owner ? " (the owner)" : ""));
    if (changeable && t !== "u:" + f.owner) {
      const b = el("button", "Stop sharing"); b.type = "button"; b.setAttribute("aria-label", "Stop sharing with " + readerWords(t));
      b.addEventListener("click", () => reshare(f.file_id, { revoke: [t === "tenant" ? "tenant" : (t.startsWith("u:") ? "user:" : "group:") + t.slice(2)] }));
      li.append(" ", b);
    }
    return li;
  }));
  $("share-form").classList.toggle("hidden", !changeable);
  $("share-links").classList.toggle("hidden", !changeable);
  if (people) {
    $("people-names").replaceChildren(...[...people.users.map((u) => u.name), ...people.groups.map((g) => g.name)].map((n) => { const o = el("option"); o.value = n; return o; }));
  }
  if (changeable) loadLinks(f.file_id, mine);
}
async function reshare(fileId, body) {
  try {
    await api("POST", "/files/" + encodeURIComponent(fileId) + "/share", body);
    if (!state.currentFile || state.currentFile.file_id !== fileId) return;
    const f = await api("GET", "/files/" + encodeURIComponent(fileId));
    if (!state.currentFile || state.currentFile.file_id !== fileId) return;
    state.currentFile = f; $("share-name").value = ""; $("share-state").textContent = "";
    renderSharing(f, state.renders); loadHistory(f, state.renders);
  } catch (err) { $("share-state").textContent = String(err.message); }
}
async function loadLinks(fileId, mine) {
  const data = await api("GET", "/files/" + encodeURIComponent(fileId) + "/links").catch(() => ({ links: [] }));
  if (stale(mine) || !state.currentFile || state.currentFile.file_id !== fileId) return;
  $("file-links").replaceChildren(...(data.links.length ? data.links.map((x) => {
    const li = el("li", (x.live ? "Works until " + dateLabel(x.expires_at) : x.revoked_at ? "Revoked" : "Expired") + (x.by ? " · made by " + x.by : ""));
    if (x.live) {
      const b = el("button", "Revoke"); b.type = "button"; b.setAttribute("aria-label", "Revoke the link that works until " + dateLabel(x.expires_at));
      b.addEventListener("click", async () => {
        try { await api("DELETE", "/files/" + encodeURIComponent(fileId) + "/links/" + encodeURIComponent(x.link_id)); loadLinks(fileId, state.renders); }
        catch (err) { $("share-state").textContent = String(err.message); }
      });
      li.append(" ", b);
    }
    return li;
  }) : [el("li", "No links yet.", "muted")]));
}
$("share-form").addEventListener("submit", (e) => {
  e.preventDefault();
  if (!state.currentFile) return;
  const kind = $("share-kind").value; const name = $("share-name").value.trim().toLowerCase();
  if (kind !== "tenant" && !name) { $("share-state").textContent = "Name the " + kind + " to share it with."; return; }
  reshare(state.currentFile.file_id, { add: [kind === "tenant" ? "tenant" : kind + ":" + name] });
});
$("make-link-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  if (!state.currentFile) return;
  const fileId = state.currentFile.file_id;
  try {
    const made = await api("POST", "/files/" + encodeURIComponent(fileId) + "/links", { days: Number($("link-days").value) });
    if (!state.currentFile || state.currentFile.file_id !== fileId) return;
    $("link-url").value = made.url; $("link-made").classList.remove("hidden"); $("link-url").focus(); $("link-url").select();
    loadLinks(fileId, state.renders); loadHistory(state.currentFile, state.renders);
  } catch (err) { $("share-state").textContent = String(err.message); }
});
$("copy-link").addEventListener("click", async () => {
  try { await navigator.clipboard.writeText($("link-url").value); notice("Link copied."); }
  catch (err) { $("link-url").select(); notice("Select the link and copy it (the browser did not allow copying)."); }
});
$("back").addEventListener("click", () => { if (history.length > 1) history.back(); else go("documents"); });
$("download").addEventListener("click", async (e) => {
  e.preventDefault(); const link = await api("GET", "/files/" + state.currentFile.file_id + "/download"); window.location = link.url;
});
