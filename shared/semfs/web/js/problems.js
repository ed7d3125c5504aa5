import { $, SOURCES, api, dateLabel, el, notice, outcomeBadge, outcomeLabel, stale, state } from "./core.js";
import { openFile } from "./file.js";
import { go } from "./router.js";
import { loadTrash } from "./trash.js";

// ---- problems: files skipped or failed, each with its reason and what can be done about it
export async function countProblems() {
  const mine = state.renders;
  try {
    const f = await api("GET", "/files/facets?listing=problems");
    if (stale(mine)) return;
    const n = f.total;
    $("problems-count").textContent = n ? String(n) + (f.capped ? "+" : "") : "";
    $("problems-count").classList.toggle("hidden", !n);
    $("docs-problems").classList.toggle("hidden", !n);
    $("docs-problems-text").textContent = n === 1 ? "1 file was skipped or could not be read. "
      : n + (f.capped ? "+" : "") + " files were skipped or could not be read. ";
  } catch (err) { /* the count is a hint: the list itself says what went wrong */ }
}
export async function loadProblems() {
  const mine = state.renders; const list = $("problems-list");
  $("problems-state").textContent = "Loading…";
  try {
    const data = await api("GET", "/files?listing=problems&include_duplicates=true&sort=newest&limit=200");
    if (stale(mine)) return;
    const problems = data.files.filter((f) => !f.duplicate_of); const copies = data.files.filter((f) => f.duplicate_of);
    list.replaceChildren(...problems.map(problemItem));
    $("copies-list").replaceChildren(...copies.map(problemItem));
    $("problems-copies").classList.toggle("hidden", !copies.length);
    $("problems-copies-title").textContent = copies.length === 1 ? "1 copy of a file already here (not a problem)"
      : copies.length + " copies of files already here (not problems)";
    $("problems-state").textContent = problems.length ? ""
      : "No problems: every file that arrived was read.";
  } catch (err) { if (stale(mine)) return; list.replaceChildren(); $("problems-state").textContent = String(err.message); }
  countProblems();
}
// the reason in words, once: "no text found" and then "no text found in the file" said it twice
/** @param {import("./core.js").FileOut} f */
export function problemReason(f) {
  const label = outcomeLabel(f); const said = f.duplicate_of ? "the same bytes arrived before" : (f.error || "");
  if (said && said.toLowerCase().startsWith(label.toLowerCase())) {
    const b = el("span", said, "badge warn"); if (f.outcome) b.title = f.outcome; return [b];
  }
  return said ? [outcomeBadge(f), " " + said] : [outcomeBadge(f)];
}
/** @param {import("./core.js").FileOut} f */
export function problemItem(f) {
  const li = el("li", null, "problem"); li.dataset.file = f.file_id;
  const a = el("a", f.filename, "result-title"); a.href = "#/file/" + encodeURIComponent(f.file_id);
  // a copy's reason names the original by its id: the link below names it for people instead
  const what = el("p"); what.append(...problemReason(f));
  const meta = el("p", [SOURCES[f.source_type] || f.source_type, dateLabel(f.created_at)].filter(Boolean).join(" · "), "muted");
  li.append(a, what, meta);
  const actions = el("p", null, "actions");
  if (f.duplicate_of) {
    const o = el("a", "Open the file it copies"); o.href = "#/file/" + encodeURIComponent(f.duplicate_of); actions.append(o);
  }
  if (f.status === "failed") {
    const b = el("button", "Try again"); b.type = "button"; b.dataset.retry = f.file_id;
    b.addEventListener("click", async () => {
      b.disabled = true; b.textContent = "Trying again…";
      try { await api("POST", "/files/" + encodeURIComponent(f.file_id) + "/retry"); b.textContent = "Queued again"; }
      catch (err) { b.disabled = false; b.textContent = "Try again"; what.append(" (" + String(err.message) + ")"); }
    });
    actions.append(b);
  }
  if (actions.childNodes.length) li.append(actions);
  return li;
}
export async function restoreFile(id, name, then) {
  const from = location.hash;  // a person who went elsewhere meanwhile stays there
  try {
    await api("POST", "/files/" + encodeURIComponent(id) + "/restore");
    const moved = location.hash !== from;  // went elsewhere meanwhile: told there, and left there
    const target = "#/" + (then || "documents");
    notice("“" + name + "” is back.", ["Open it", () => openFile(id)],
           { carry: !moved && then !== "trash" && !location.hash.startsWith(target) });
    if (moved) return;
    if (then === "trash") loadTrash(); else go(then || "documents");
  } catch (err) { notice(String(err.message)); }
}
