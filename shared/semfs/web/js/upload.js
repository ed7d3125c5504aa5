import { $, api, config, el, outcomeLabel, pause } from "./core.js";
import { loadPeople } from "./people.js";

// ---- upload: many files at once (drop or choose), each followed through the pipeline's stages
export const STAGES = ["received", "extracting", "ocr", "enriching", "embedding", "indexing", "indexed"];
export const FINAL = ["indexed", "failed", "skipped", "deleted"];
export const drop = $("drop");
["dragenter", "dragover"].forEach((t) => drop.addEventListener(t, (e) => { e.preventDefault(); drop.classList.add("over"); }));
["dragleave", "drop"].forEach((t) => drop.addEventListener(t, (e) => { e.preventDefault(); drop.classList.remove("over"); }));
drop.addEventListener("drop", (e) => uploadAll([...e.dataTransfer.files]));
drop.addEventListener("keydown", (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); $("upload-file").click(); } });
drop.addEventListener("click", () => $("upload-file").click());
$("upload-file").addEventListener("change", () => {
  const n = $("upload-file").files.length; $("upload-state").textContent = n ? n + " file(s) chosen: Upload sends them" : "";
});
$("upload-form").addEventListener("submit", (e) => { e.preventDefault(); uploadAll([...$("upload-file").files]); });
export async function uploadAll(files) {
  if (!files.length) { $("upload-state").textContent = "Choose or drop at least one file."; return; }
  if (files.length > 1 && $("upload-previous").value.trim()) {
    $("upload-state").textContent = "“New version of” takes one file at a time."; return;
  }
  $("upload-state").textContent = files.length + " file(s): uploading one after another";
  const rows = files.map((file) => uploadRow(file.name));
  for (let i = 0; i < files.length; i += 1) await uploadOne(files[i], rows[i]);
  $("upload-file").value = "";
  const failed = rows.filter((r) => r.dataset.state === "failed").length;
  $("upload-state").textContent = files.length + " file(s) done" + (failed ? ", " + failed + " not indexed" : "");
}
export function uploadRow(name) {
  const li = el("li", null, "upload"); const bar = el("progress"); bar.max = STAGES.length - 1; bar.value = 0;
  bar.setAttribute("aria-label", name + " progress");
  li.append(el("span", name, "upload-name"), bar, el("span", "waiting", "upload-stage"));
  $("upload-list").prepend(li); return li;
}
// AWS: the bytes go straight to the bucket through a presigned POST (the API takes at most a few MB), and the
// bucket's notice starts ingestion. The file's id follows from its identity (tenant, key, SHA-256), so the
// page asks for it with the key's SHA-256 and waits until the record exists; tags are added to it then.
export async function sendDirect(file, stage) {
  stage.textContent = "reading…";
  const digest = await crypto.subtle.digest("SHA-256", await file.arrayBuffer());
  const sha256 = [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
  const target = await api("POST", "/files?" + new URLSearchParams({ filename: file.name, sha256 }));
  const form = new FormData();
  for (const [field, value] of Object.entries(target.fields)) form.append(field, value);
  form.append("file", file, file.name);  // S3 reads every field after "file" as part of the file: last
  stage.textContent = "uploading…";
  let res;
  try { res = await fetch(target.url, { method: "POST", body: form }); }
  catch (err) { throw new Error("the file store is not answering (" + err.message + ")"); }
  if (!res.ok) throw new Error(res.status === 400 ? "the file store refused it (too large, or the link expired)" : "the file store refused it (" + res.status + ")");
  stage.textContent = "sent: waiting for semfs to receive it…";
  for (let tries = 0; ; tries += 1) {
    try {
      let rec = await api("GET", "/files/" + encodeURIComponent(target.file_id));
      const tags = $("upload-tags").value.split(",").map((t) => t.trim()).filter(Boolean);
      if (tags.length) rec = await api("PATCH", "/files/" + encodeURIComponent(rec.file_id), { add_tags: tags });
      return rec;
    } catch (err) {
      if (err.status !== 404) throw err;
      if (tries >= 300) throw new Error("sent, but semfs has not received it yet: it will be in Documents once it has");
    }
    await pause(1000);
  }
}
export async function uploadOne(file, li) {
  const stage = li.querySelector(".upload-stage"); const bar = li.querySelector("progress");
  if (config.uploads === "presigned") {
    try {
      let rec = await sendDirect(file, stage);
      while (!FINAL.includes(rec.status)) {
        bar.value = Math.max(0, STAGES.indexOf(rec.status)); stage.textContent = rec.status + "…";
        await pause(1000);
        rec = await api("GET", "/files/" + encodeURIComponent(rec.file_id));
      }
      showResult(li, rec);
    } catch (err) { li.dataset.state = "failed"; stage.textContent = String(err.message); bar.value = 0; }
    return;
  }
  const form = new FormData(); form.append("file", file, file.name);
  for (const [field, id] of [["tags", "upload-tags"], ["thread_id", "upload-thread"], ["contact_ids", "upload-contacts"],
                             ["previous_version_id", "upload-previous"], ["share_with", "upload-share"]]) {
    if ($(id).value.trim()) form.append(field, $(id).value.trim());
  }
  stage.textContent = "uploading…";
  try {
    let rec = null;
    while (rec === null) {
      try { rec = await api("POST", "/files", undefined, form); li.dataset.created = rec.created === false ? "no" : "yes"; }
      catch (err) {  // this tenant's queue is full (429): nothing was stored, so send it again when told
        if (err.status !== 429) throw err;
        stage.textContent = "semfs is busy with earlier files: trying again in " + err.retryAfter + " s";
        await new Promise((ok) => setTimeout(ok, Math.max(1, err.retryAfter) * 1000));
      }
    }
    while (!FINAL.includes(rec.status)) {  // queued by semfs serve: follow it through the stages
      bar.value = Math.max(0, STAGES.indexOf(rec.status)); stage.textContent = rec.status + "…";
      await new Promise((ok) => setTimeout(ok, 500));
      rec = await api("GET", "/files/" + encodeURIComponent(rec.file_id));
    }
    showResult(li, rec);
  } catch (err) { li.dataset.state = "failed"; stage.textContent = String(err.message); bar.value = 0; }
}
/** @param {HTMLElement} li @param {import("./core.js").FileOut} rec */
export function showResult(li, rec) {
  const stage = li.querySelector(".upload-stage"); const bar = li.querySelector("progress");
  li.dataset.state = rec.status === "indexed" ? "done" : "failed";
  bar.value = rec.status === "indexed" ? bar.max : 0;
  // a duplicate leads to the file already here (its tags, notes and versions are that file's, not the copy's)
  // the same file sent again (same name, same bytes) is the file already here, unchanged: said so
  const shown = rec.duplicate_of || rec.file_id;
  const again = li.dataset.created === "no" && !rec.duplicate_of;
  const link = el("a", rec.duplicate_of ? "already here: open it" : again ? "already here, unchanged: open it" : outcomeLabel(rec));
  link.href = "#/file/" + encodeURIComponent(shown);
  if (rec.outcome) link.title = rec.outcome;
  stage.replaceChildren(link);
  if (rec.error && !rec.duplicate_of) stage.append(" — " + rec.error);
  if (rec.status === "failed") {
    const b = el("button", "Retry"); b.dataset.retry = rec.file_id;
    b.addEventListener("click", async () => {
      stage.textContent = "retrying…";
      try {
        let r = await api("POST", "/files/" + encodeURIComponent(rec.file_id) + "/retry");
        while (!FINAL.includes(r.status)) { await new Promise((ok) => setTimeout(ok, 500)); r = await api("GET", "/files/" + r.file_id); }
        showResult(li, r);
      } catch (err) { stage.textContent = String(err.message); }
    });
    stage.append(" ", b);
  }
}
// who an upload is shared with: the default, you alone, everyone, or one of the tenant's groups
$("upload-share").addEventListener("focus", async () => {
  const people = await loadPeople();
  if (!people) return;
  const have = new Set([...$("upload-share").options].map((o) => o.value));
  for (const g of people.groups) {
    if (have.has("group:" + g.name)) continue;
    const o = el("option", "group " + g.name); o.value = "group:" + g.name; $("upload-share").append(o);
  }
});
