import { $, $$, keepNotice, key, off, state } from "./core.js";
import { loadDocs } from "./documents.js";
import { loadEntities, loadEntity } from "./entities.js";
import { loadFile } from "./file.js";
import { loadMailView } from "./mail.js";
import { loadPeopleView } from "./people.js";
import { loadProblems } from "./problems.js";
import { runSearch } from "./search.js";
import { checkKey } from "./signin.js";
import { loadStatus } from "./status.js";
import { loadTrash } from "./trash.js";

// ---- views and the URL: every view has an address (#/documents?sort=name&page=2, #/file/<id>, …),
// so links can be shared and back/forward work
export function show(view) {
  if (view !== "notfound") document.title = "semfs";
  $$(".view").forEach((v) => v.classList.add("hidden"));
  $("view-" + view).classList.remove("hidden");
  $$("nav[aria-label=Views] button").forEach((b) => b.classList.toggle("active", b.dataset.view === view));
}
export function go(view, params) {
  const q = new URLSearchParams(params || {}).toString();
  const target = "#/" + view + (q ? "?" + q : "");
  if (location.hash === target) route(); else location.hash = target;
}
export function route() {
  // a key that arrived since (another tab signed in) is checked first; a refused one is said, and the view opens
  if (document.body.classList.contains("signed-out") && key()) checkKey().then(render); else render();
}
export function render() {
  state.renders++;
  keepNotice();
  const [path, query] = location.hash.replace(/^#\/?/, "").split("?");
  const params = new URLSearchParams(query || "");
  const [view, id] = (path || "documents").split("/");
  if (view === "file" && id) { loadFile(decodeURIComponent(id)); return; }
  if (view === "entity" && params.get("name")) { loadEntity(params.get("name")); return; }
  const known = ["documents", "problems", "search", "ask", "upload", "status", "trash", "entities", "people", "mail"];
  if (!known.includes(view)) { notFound(location.hash); return; }
  const name = view;
  show(name);
  if (name === "documents") loadDocs(params);
  if (name === "trash") loadTrash();
  if (name === "problems") loadProblems();
  if (name === "status") loadStatus();
  if (name === "people") loadPeopleView();
  if (name === "mail") loadMailView();
  if (name === "entities") loadEntities(params);
  if (name === "ask") {  // a scope handed over by the Documents view ("Ask about these files")
    $("a-tag").value = params.get("tag") || ""; $("a-thread").value = params.get("thread") || "";
    $("a-source").value = params.get("source") || "";
    if (params.get("tag") || params.get("thread") || params.get("source")) $("ask-scope").open = true;
  }
  if (name === "search" && params.get("q")) {
    $("q").value = params.get("q"); $("mode").value = off("semantic") ? "keyword" : params.get("mode") || "hybrid";
    // filters handed over by the Documents view ("Search these files"), in the URL like the query
    $("f-tags").value = params.get("tag") || $("f-tags").value; $("f-source").value = params.get("source") || $("f-source").value;
    $("f-thread").value = params.get("thread") || $("f-thread").value; $("f-contact").value = params.get("contact") || $("f-contact").value;
    if (["tag", "source", "thread", "contact"].some((k) => params.get(k))) $("s-filters").open = true;
    state.searchLimit = Math.min(100, parseInt(params.get("n") || "20", 10) || 20); runSearch();
  }
}
$$("nav[aria-label=Views] button").forEach((b) => b.addEventListener("click", () => go(b.dataset.view)));
window.addEventListener("hashchange", route);
// an address that names no view (an old or mistyped link) says so, instead of showing Documents under it
export function notFound(address) {
  show("notfound");
  $("notfound-address").textContent = address;
  document.title = "Not found · semfs";
}
