import { $, api, el, stale, state } from "./core.js";
import { go, show } from "./router.js";

// ---- entities: what the files name (people, organisations, amounts, identifiers…), each with its page
/** @type {Record<import("./core.js").Schemas["EntityInfo"]["kind"], string>} */
export const KINDS = { person: "person", organisation: "organisation", email: "email address", phone: "phone number",
                money: "amount", date: "date", identifier: "identifier" };
export const entityLink = (e) => {
  const a = el("a", e.label); a.href = "#/entity?" + new URLSearchParams({ name: e.entity_id }).toString();
  a.title = (KINDS[e.kind] || e.kind) + (e.detail ? " (" + e.detail + ")" : ""); return a;
};
export async function fileEntities(f, mine) {
  const data = await api("GET", "/files/" + encodeURIComponent(f.file_id) + "/entities").catch(() => ({ entities: [] }));
  if (stale(mine)) return;
  const shown = data.entities.slice(0, 40);
  $("file-entities").replaceChildren(...shown.map((e) => { const li = el("li", null, "tag"); li.append(entityLink(e)); return li; }));
  $("file-entities-heading").classList.toggle("hidden", !shown.length);
}
$("entities-form").addEventListener("submit", (e) => {
  e.preventDefault(); const p = {};
  if ($("e-kind").value) p.kind = $("e-kind").value;
  if ($("e-q").value.trim()) p.q = $("e-q").value.trim();
  go("entities", p);
});
export async function loadEntities(params) {
  $("e-kind").value = params.get("kind") || ""; $("e-q").value = params.get("q") || "";
  const q = new URLSearchParams({ limit: "200" });
  if (params.get("kind")) q.set("kind", params.get("kind"));
  if (params.get("q")) q.set("q", params.get("q"));
  $("entities-state").textContent = "Loading…";
  const mine = state.renders;
  try {
    const data = await api("GET", "/entities?" + q.toString());
    if (stale(mine)) return;
    $("entities-list").replaceChildren(...data.entities.map((e) => {
      const li = el("li"); li.append(entityLink(e));
      li.append(el("span", " " + (KINDS[e.kind] || e.kind) + (e.detail ? " (" + e.detail + ")" : "") + " · " + e.files
        + (e.files === 1 ? " file" : " files"), "muted"));
      return li;
    }));
    $("entities-state").textContent = data.entities.length ? "" : "Nothing found: files name people, organisations and numbers once they are read.";
  } catch (err) { if (!stale(mine)) $("entities-state").textContent = String(err.message); }
}
export async function loadEntity(name) {
  show("entity");
  $("entity-loaded").classList.add("hidden"); $("entity-state").textContent = ""; $("entity-meta").textContent = "";
  $("entity-title").textContent = "Opening…";
  const mine = state.renders;
  let page;
  try { page = await api("GET", "/entity?" + new URLSearchParams({ name }).toString()); }
  catch (err) {
    if (stale(mine)) return;
    $("entity-title").textContent = err.status === 404 ? "Not named in any file" : "This could not be opened";
    $("entity-state").textContent = err.status === 404 ? "No file names " + name + " (any more)." : String(err.message);
    return;
  }
  if (stale(mine)) return;
  const e = page.entity;
  $("entity-title").textContent = e.label;
  $("entity-meta").textContent = (KINDS[e.kind] || e.kind) + (e.detail ? " (" + e.detail + ")" : "") + " · named in "
    + page.files.length + (page.files.length === 1 ? " file" : " files");
  const contact = $("entity-contact"); contact.replaceChildren();
  if (page.contact) {
    const a = el("a", page.contact.name || page.contact.email);
    a.href = "#/documents?" + new URLSearchParams({ contact: page.contact.contact_id }).toString();
    const address = page.contact.email && page.contact.name ? " <" + page.contact.email + ">" : "";
    const dd = el("dd"); dd.append(a, address + (page.contact.organisation ? ", " + page.contact.organisation : ""));
    contact.append(el("dt", "contact"), dd);
  }
  $("entity-files").replaceChildren(...page.files.map((f) => {
    const li = el("li"); const a = el("a", f.title || f.filename); a.href = "#/file/" + encodeURIComponent(f.file_id);
    li.append(a, el("span", " " + f.filename + " · " + f.location + (f.came_from ? " · from " + f.came_from : ""), "muted"));
    return li;
  }));
  $("entity-documents").href = "#/documents?" + new URLSearchParams({ entity: e.entity_id }).toString();
  $("entity-threads").replaceChildren(...page.threads.map((t) => {
    const li = el("li"); const a = el("a", t.subject); a.href = "#/documents?" + new URLSearchParams({ thread: t.thread_id }).toString();
    li.append(a, el("span", " · " + t.files + (t.files === 1 ? " file" : " files"), "muted")); return li;
  }));
  $("entity-threads-heading").classList.toggle("hidden", !page.threads.length);
  $("entity-loaded").classList.remove("hidden");
}
