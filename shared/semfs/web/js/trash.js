import { $, $$, api, dateLabel, dayLabel, el, notice, stale, state } from "./core.js";
import { restoreMany } from "./documents.js";
import { restoreFile } from "./problems.js";

// ---- trash: deleted files, newest first; restore one, erase one, or empty it
export async function loadTrash() {
  const mine = state.renders;
  $("trash-state").textContent = "Loading…"; $("trash-list").replaceChildren(); $("restore-selected").classList.add("hidden");
  try {
    const data = await api("GET", "/trash?limit=200");
    if (stale(mine)) return;
    $("trash-state").textContent = data.total ? data.total + " file(s) in the trash." : "The trash is empty.";
    $("empty-trash").classList.toggle("hidden", !data.total);
    for (const f of data.items) {
      const li = el("li"); li.dataset.fileId = f.file_id;
      const pick = el("input"); pick.type = "checkbox"; pick.value = f.file_id; pick.dataset.name = f.filename;
      pick.setAttribute("aria-label", "select " + f.filename);
      pick.addEventListener("change", () => $("restore-selected").classList.toggle("hidden", !trashPicked().length));
      li.append(pick, " ", el("strong", f.title || f.filename), el("span", f.filename, "badge"));
      li.append(el("p", "deleted " + dateLabel(f.deleted_at) + (f.purge_on ? " · erased for good on " + dayLabel(f.purge_on) : ""), "muted"));
      const restore = el("button", "Restore"); restore.type = "button"; restore.dataset.restore = f.file_id;
      restore.setAttribute("aria-label", "Restore " + f.filename);
      restore.addEventListener("click", () => restoreFile(f.file_id, f.filename, "trash"));
      li.append(restore);
      $("trash-list").append(li);
    }
  } catch (err) { if (!stale(mine)) $("trash-state").textContent = String(err.message); }
}
export const trashPicked = () => $$("#trash-list input[type=checkbox]:checked").map((x) => ({ id: x.value, name: x.dataset.name }));
$("restore-selected").addEventListener("click", () => { const rows = trashPicked(); if (rows.length) restoreMany(rows, "trash"); });
$("empty-trash").addEventListener("click", async () => {
  const n = $("trash-list").children.length;
  if (!window.confirm("Erase the " + n + " file(s) in the trash for good? This cannot be undone.")) return;
  try {
    const done = await api("DELETE", "/trash");
    notice(done.purged.length + " file(s) erased for good."); loadTrash();
  } catch (err) { $("trash-state").textContent = String(err.message); }
});
