import { $, $$ } from "./core.js";
import { go } from "./router.js";

// ---- the keyboard: "/" search, j/k through a list, Enter opens, "g" then a letter goes to a view, "?" lists them.
// Typing in a field is never taken for a shortcut; Esc leaves the field.
export const GO_TO = { d: "documents", s: "search", a: "ask", e: "entities", p: "problems", t: "trash", u: "upload", o: "status" };
export let awaitingView = false;
export function listLinks() {
  return $$(".view:not(.hidden) a.doc-title, .view:not(.hidden) a.result-title");
}
export function moveInList(step) {
  const links = listLinks(); if (!links.length) return;
  const at = links.indexOf(document.activeElement);
  const next = links[at < 0 ? 0 : Math.max(0, Math.min(links.length - 1, at + step))];
  /** @type {HTMLElement} */ (next).focus(); (next.closest("tr, li") || next).scrollIntoView({ block: "nearest" });
}
$("show-shortcuts").addEventListener("click", () => $("shortcuts").showModal());
document.addEventListener("keydown", (e) => {
  if (e.ctrlKey || e.metaKey || e.altKey || $("shortcuts").open) return;
  const target = /** @type {HTMLElement} */ (e.target);
  if (target.closest && target.closest("input, textarea, select, [contenteditable]")) {
    if (e.key === "Escape") target.blur();
    return;
  }
  if (awaitingView) {
    awaitingView = false;
    if (GO_TO[e.key] && !document.querySelector("nav[aria-label=Views] button[data-view=" + GO_TO[e.key] + "]").classList.contains("hidden")) {
      e.preventDefault(); go(GO_TO[e.key]);
    }
    return;
  }
  if (e.key === "/") {
    e.preventDefault();
    if (!$("view-documents").classList.contains("hidden")) { $("d-q").focus(); return; }
    if ($("view-search").classList.contains("hidden")) go("search");
    $("q").focus();
  } else if (e.key === "?") { e.preventDefault(); $("shortcuts").showModal(); }
  else if (e.key === "j" || e.key === "k") { e.preventDefault(); moveInList(e.key === "j" ? 1 : -1); }
  else if (e.key === "g") awaitingView = true;
});
