import { $, $$, PAGE, SOURCES, api, dateLabel, el, key, notice, outcomeBadge, sizeLabel, stale, state, typeLabel } from "./core.js";
import { countProblems } from "./problems.js";
import { go } from "./router.js";
import { loadTrash } from "./trash.js";

// ---- documents: every file (latest versions), sorted, paged, filtered by names
export const FILTERS = [["tag", "tag"], ["source", "source_type"], ["type", "mime_type"], ["thread", "thread_id"], ["contact", "contact_id"],
                 ["entity", "entity"], ["since", "since"], ["until", "until"]];
export let docsFilters = {};  // the listing's filters as the URL has them (type comes from a facet, not a field)
export function docsParams() {
  const p = { sort: $("d-sort").value };
  for (const k of ["type", "entity", "since", "until"]) if (docsFilters[k]) p[k] = docsFilters[k];
  for (const [k, id] of [["tag", "d-tag"], ["source", "d-source"], ["thread", "d-thread"], ["contact", "d-contact"]]) {
    if ($(id).value.trim()) p[k] = $(id).value.trim();
  }
  if ($("d-history").checked) p.history = "1";
  return p;
}
$("docs-form").addEventListener("submit", (e) => { e.preventDefault(); go("documents", docsParams()); });
$("d-sort").addEventListener("change", () => go("documents", docsParams()));
$("docs-search").addEventListener("submit", (e) => {  // relevance within what the list shows
  e.preventDefault(); if (!$("d-q").value.trim()) return;
  const p = docsParams(); const scope = { q: $("d-q").value.trim(), mode: "hybrid" };
  for (const k of ["tag", "source", "thread", "contact"]) if (p[k]) scope[k] = p[k];
  go("search", scope);
});
$("docs-ask").addEventListener("click", () => {
  const p = docsParams(); const scope = {};
  for (const k of ["tag", "thread", "source"]) if (p[k]) scope[k] = p[k];
  go("ask", scope);
});
$("docs-prev").addEventListener("click", () => go("documents", { ...docsParams(), page: String(Math.max(1, docsPage - 1)) }));
$("docs-next").addEventListener("click", () => go("documents", { ...docsParams(), page: String(docsPage + 1) }));
export let docsPage = 1;
export let facetScope = {};  // the listing's scope, for "Show more" on its facets
export async function loadDocs(params) {
  loadViews(params);
  $("d-sort").value = params.get("sort") || "newest";
  $("d-tag").value = params.get("tag") || ""; $("d-source").value = params.get("source") || "";
  $("d-thread").value = params.get("thread") || ""; $("d-contact").value = params.get("contact") || "";
  $("d-history").checked = params.get("history") === "1";
  if (["tag", "source", "thread", "contact", "history"].some((k) => params.get(k))) $("d-filters").open = true;
  docsPage = Math.max(1, parseInt(params.get("page") || "1", 10) || 1);
  // documents only: what was skipped or failed waits under Problems, with its reason
  const q = new URLSearchParams({ limit: String(PAGE), sort: $("d-sort").value, cursor: String((docsPage - 1) * PAGE),
                                  listing: "documents" });
  const scope = new URLSearchParams({ listing: "documents" });
  docsFilters = {};
  for (const [k, field] of FILTERS) {
    if (params.get(k)) { q.set(field, params.get(k)); scope.set(field, params.get(k)); docsFilters[k] = params.get(k); }
  }
  if (params.get("history") === "1") { q.set("include_history", "true"); scope.set("include_history", "true"); }
  renderActive(params);
  const body = $("docs-table").tBodies[0];
  $("docs-state").textContent = "Loading…";
  if (!key()) { body.replaceChildren(); $("docs-state").textContent = "Sign in to see your files."; return; }
  const mine = state.renders;
  try {
    const data = await api("GET", "/files?" + q.toString());
    if (stale(mine)) return;
    body.replaceChildren(...data.files.map(docRow));
    $("select-all").checked = false; selectionChanged();
    const first = (docsPage - 1) * PAGE + 1;
    const filtered = FILTERS.some(([k]) => params.get(k));
    $("docs-state").textContent = data.files.length ? "" : (filtered || docsPage > 1
      ? "No files match these filters." : "No files yet: upload some (Upload), or put them in the drop folder.");
    const shown = data.files.length ? "files " + first + "–" + (first + data.files.length - 1) : "";
    $("docs-page").textContent = shown; $("docs-page").dataset.range = shown;
    $("docs-prev").disabled = docsPage === 1; $("docs-next").disabled = !data.next_cursor;
  } catch (err) { if (stale(mine)) return; body.replaceChildren(); $("docs-state").textContent = String(err.message); }
  facetScope = Object.fromEntries(scope.entries());
  api("GET", "/files/facets?" + scope.toString()).then((f) => {
    if (stale(mine)) return;
    renderFacets(f);
    if (params.get("entity")) renderActive(params);  // the entity's chip reads its name, now that it is known
    const range = $("docs-page").dataset.range;  // the total, once counted: "files 1–20 of 62"
    if (range) $("docs-page").textContent = range + " of " + f.total.toLocaleString() + (f.capped ? "+" : "");
  }).catch(() => stale(mine) || $("facets").replaceChildren());
  countProblems();
  api("GET", "/tags").then((t) => $("tag-names").replaceChildren(...(t.tags || []).map((x) => {
    const o = el("option"); o.value = x.tag; o.textContent = x.label || x.tag; return o;
  }))).catch(() => {});
}
export const FACETS = [["tag", "Tags", "tag"], ["type", "Type", "type"], ["source", "Source", "source"],
                ["thread", "Threads", "thread"], ["contact", "Contacts", "contact"], ["entity", "Names", "entity"],
                ["month", "Added", "month"]];
export const entityNames = {};  // entity id → its label, from the facets: the active filter's chip shows the name
// On a phone the facets come first, folded behind one line (before, they came after twenty file cards);
// on a wider screen they are a column beside the list, open.
export function renderFacets(data) {
  const outer = $("facets"); const before = outer.querySelector("details"); outer.replaceChildren();
  const fold = el("details", null, "facets-fold");
  fold.open = before ? before.open : !matchMedia("(max-width: 700px)").matches;  // ("Show more" keeps it open)
  const summary = el("summary", "Narrow by tag, type, source or date"); fold.append(summary);
  const box = el("div"); fold.append(box);
  for (const [field, title, param] of FACETS) {
    const values = data[field] || [];
    if (!values.length || (values.length === 1 && docsFilters[param])) continue;
    const group = el("section", null, "facet"); group.append(el("h3", title));
    const list = el("ul");
    for (const v of values) {
      if (field === "entity") entityNames[v.value] = v.label;
      const li = el("li"); const shown = field === "type" ? typeLabel(v.value) : field === "source" ? SOURCES[v.value] || v.label
        : field === "month" ? new Date(v.value + "-01T00:00:00Z").toLocaleDateString(undefined, { month: "short", year: "numeric", timeZone: "UTC" })
          : v.label;
      const b = el("button", shown, "facet-value");
      b.type = "button"; b.dataset.facet = param; b.dataset.value = v.value;
      b.addEventListener("click", () => go("documents", { ...docsParams(), ...facetFilter(param, v.value) }));
      li.append(b, el("span", String(v.count), "count")); list.append(li);
    }
    group.append(list); box.append(group);
  }
  const hidden = Object.values(data.more || {}).reduce((a, b) => a + b, 0);
  if (hidden) {  // every facet whole, on request: the same counts with no cut
    const b = el("button", "Show " + hidden + " more", "linkish"); b.type = "button"; b.id = "facets-more";
    b.addEventListener("click", async () => {
      const mine = state.renders; const scope = new URLSearchParams({ ...facetScope, top: "500" });
      const all = await api("GET", "/files/facets?" + scope.toString()).catch(() => null);
      if (all && !stale(mine)) renderFacets(all);
    });
    box.append(b);
  }
  if (data.capped) box.append(el("p", "counted over the first 10,000 files", "muted"));
  if (box.childElementCount) outer.append(fold);
  for (const [field, list] of [["thread", "thread-names"], ["contact", "contact-names"]]) {  // names to type
    $(list).replaceChildren(...(data[field] || []).map((v) => { const o = el("option"); o.value = v.label; return o; }));
  }
}
export function facetFilter(param, value) {
  if (param !== "month") return { [param]: value };
  const [y, m] = value.split("-").map(Number);  // a month: from its first day to the next month's
  const next = m === 12 ? (y + 1) + "-01" : y + "-" + String(m + 1).padStart(2, "0");
  return { since: value + "-01", until: next + "-01" };
}
export function renderActive(params) {
  const box = $("active-filters"); box.replaceChildren();
  for (const [k] of FILTERS) {
    if (!params.get(k)) continue;
    const label = k === "type" ? typeLabel(params.get(k)) : k === "entity" ? entityNames[params.get(k)] || params.get(k) : params.get(k);
    const chip = el("span", k + ": " + label, "tag chip"); const x = el("button", "×"); x.title = "remove this filter";
    x.setAttribute("aria-label", "remove filter " + k);
    x.addEventListener("click", () => { const p = docsParams(); delete p[k]; docsFilters = {}; go("documents", p); });
    chip.append(x); box.append(chip);
  }
}
// ---- saved views: a named listing (filters and sort) the whole tenant shares, opened by its address
export const VIEW_KEYS = ["tag", "source", "type", "thread", "contact", "since", "until", "sort"];
export let savedViews = [];
export function viewParams(params) {
  const kept = {};
  for (const k of VIEW_KEYS) if (params.get(k)) kept[k] = params.get(k);
  return kept;
}
export async function loadViews(params) {
  const mine = state.renders;
  const data = await api("GET", "/views").catch(() => ({ views: [] }));
  if (stale(mine)) return;
  savedViews = data.views;
  const here = JSON.stringify(viewParams(params));
  const current = savedViews.find((v) => JSON.stringify(viewParams(new URLSearchParams(v.params))) === here);
  $("view-pick").replaceChildren(el("option", savedViews.length ? "—" : "none saved yet"), ...savedViews.map((v) => {
    const o = el("option", v.name); o.value = v.name; return o;
  }));
  $("view-pick").firstChild.value = "";
  $("view-pick").value = current ? current.name : "";
  $("view-delete").classList.toggle("hidden", !current);
}
$("view-pick").addEventListener("change", () => {
  const v = savedViews.find((x) => x.name === $("view-pick").value);
  go("documents", v ? v.params : {});
});
$("view-save").addEventListener("click", async () => {
  const params = viewParams(new URLSearchParams(location.hash.split("?")[1] || ""));
  const name = (window.prompt("Name this view (everyone in your workspace will see it):", $("view-pick").value || "") || "").trim();
  if (!name) return;
  try {
    await api("PUT", "/views/" + encodeURIComponent(name), { params });
    $("view-state").textContent = "Saved “" + name + "”.";
    loadViews(new URLSearchParams(location.hash.split("?")[1] || ""));
  } catch (err) { $("view-state").textContent = String(err.message); }
});
$("view-delete").addEventListener("click", async () => {
  const name = $("view-pick").value;  // the view this listing is: named in the confirmation, deleted by that name
  if (!name || !window.confirm("Delete the saved view “" + name + "”? The files stay as they are.")) return;
  try {
    await api("DELETE", "/views/" + encodeURIComponent(name));
    $("view-state").textContent = "Deleted “" + name + "”.";
    loadViews(new URLSearchParams(location.hash.split("?")[1] || ""));
  } catch (err) { $("view-state").textContent = String(err.message); }
});

// ---- bulk tag edit over the selected rows
export const selected = () => $$("#docs-table tbody input[type=checkbox]:checked").map((x) => x.value);
export function selectionChanged() {
  const n = selected().length;
  $("bulk-form").classList.toggle("hidden", n === 0);
  $("bulk-count").textContent = n + " selected";
}
$("select-all").addEventListener("change", () => {
  $$("#docs-table tbody input[type=checkbox]").forEach((x) => { x.checked = $("select-all").checked; });
  selectionChanged();
});
export async function bulkTag(adding) {
  const tag = $("bulk-tag").value.trim(); const ids = selected();
  if (!tag || !ids.length) { $("bulk-state").textContent = "Type a tag first."; return; }
  let done = 0;
  for (const id of ids) {
    try {
      await api("PATCH", "/files/" + encodeURIComponent(id), adding ? { add_tags: [tag], remove_tags: [] } : { add_tags: [], remove_tags: [tag] });
      done += 1; $("bulk-state").textContent = done + " of " + ids.length + "…";
    } catch (err) { $("bulk-state").textContent = String(err.message); return; }
  }
  $("bulk-state").textContent = (adding ? "Tagged " : "Untagged ") + done + " file(s) “" + tag + "”";
  const message = $("bulk-state").textContent;
  await loadDocs(new URLSearchParams(location.hash.split("?")[1] || ""));
  $("bulk-state").textContent = message;
}
// Delete the selected files: the confirmation names them (the first few, and how many), the ids are the
// ones checked when it was clicked, and the notice's Undo brings back exactly those
export async function bulkDelete() {
  const rows = $$("#docs-table tbody input[type=checkbox]:checked")
    .map((x) => ({ id: x.value, name: x.dataset.name || x.value }));
  if (!rows.length) return;
  const named = rows.slice(0, 3).map((r) => "“" + r.name + "”").join(", ") + (rows.length > 3 ? " and " + (rows.length - 3) + " more" : "");
  if (!window.confirm("Move " + rows.length + " file(s) to the trash: " + named + "? They leave search at once; you can restore them from the Trash.")) return;
  const gone = [];
  for (const r of rows) {
    try { await api("DELETE", "/files/" + encodeURIComponent(r.id)); gone.push(r); $("bulk-state").textContent = gone.length + " of " + rows.length + "…"; }
    catch (err) { $("bulk-state").textContent = String(err.message); break; }
  }
  $("bulk-state").textContent = "";
  notice(gone.length + " file(s) moved to the trash.", gone.length ? ["Undo", () => restoreMany(gone, "documents")] : null, { focus: true });
  await loadDocs(new URLSearchParams(location.hash.split("?")[1] || ""));
}
export async function restoreMany(rows, then) {
  const from = location.hash;  // a person who went elsewhere meanwhile stays there
  let back = 0;
  for (const r of rows) {
    try { await api("POST", "/files/" + encodeURIComponent(r.id) + "/restore"); back += 1; }
    catch (err) { notice(String(err.message)); return; }
  }
  const moved = location.hash !== from;  // went elsewhere meanwhile: told there, and left there
  const here = then === "trash" || location.hash.startsWith("#/documents");
  notice(back + " file(s) are back.", null, { carry: !moved && !here });
  if (moved) return;
  if (then === "trash") loadTrash(); else if (here) loadDocs(new URLSearchParams(location.hash.split("?")[1] || "")); else go("documents");
}
$("bulk-delete").addEventListener("click", bulkDelete);
$("bulk-form").addEventListener("submit", (e) => { e.preventDefault(); bulkTag(true); });
$("bulk-remove").addEventListener("click", () => bulkTag(false));

/** @param {import("./core.js").FileOut} f */
export function docRow(f) {
  const tr = el("tr");
  const pick = el("td"); const box = el("input"); box.type = "checkbox"; box.value = f.file_id;
  box.dataset.name = f.filename;
  box.setAttribute("aria-label", "select " + f.filename); box.addEventListener("change", selectionChanged); pick.append(box);
  const name = el("td"); const a = el("a", f.title || f.filename, "doc-title"); a.href = "#/file/" + encodeURIComponent(f.file_id);
  name.append(a);
  if (f.title && f.title !== f.filename) name.append(el("div", f.filename, "muted"));
  if (f.version > 1) name.append(el("span", "v" + f.version, "badge"));
  if (f.status !== "indexed") name.append(outcomeBadge(f));
  const tags = el("td");
  for (const t of (f.tags || []).slice(0, 4)) tags.append(el("span", (f.tag_labels || {})[t] || t, "tag"));
  for (const t of (f.auto_tags || []).slice(0, Math.max(0, 3 - (f.tags || []).length))) tags.append(el("span", t, "tag auto"));
  const added = el("td", f.created_at ? new Date(f.created_at).toLocaleDateString(undefined, { dateStyle: "medium" }) : "");
  added.title = dateLabel(f.created_at);
  tr.append(pick, name, el("td", typeLabel(f.mime_type)), el("td", sizeLabel(f.size_bytes)), added, tags);
  return tr;
}
