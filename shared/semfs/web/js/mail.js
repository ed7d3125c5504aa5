// The Mail accounts view (admins): the tenant's mailboxes, reading one now, its rules and what they would do
// to the newest messages. A password goes to the API and is never shown again.
import { $, api, dateLabel, el, notice } from "./core.js";

/** @type {import("./core.js").MailAccountOut[]} */
let accounts = [];
let chosen = "";
const cell = (label, text) => { const td = el("td", text); td.dataset.label = label; return td; };
const listed = (text) => text.split(",").map((x) => x.trim()).filter(Boolean);
const AFTER = { seen: "mark read", flag: "flag", move: "move", none: "leave" };
const TAKES = { mail: "attachments and body", attachments: "attachments", body: "the body", message: "the whole message", skip: "nothing" };
const path = (name) => "/mail/accounts/" + encodeURIComponent(name);

export async function loadMailView() {
  $("mail-state").textContent = "";
  try { accounts = (await api("GET", "/mail/accounts")).accounts; }
  catch (err) { $("mail-state").textContent = String(err.message); return; }
  $("mail-none").classList.toggle("hidden", accounts.length > 0);
  $("mail-body").replaceChildren(...accounts.map((a) => {
    const tr = el("tr");
    const then = a.after === "move" ? "move to " + (a.move_to || "") : AFTER[a.after] || a.after;
    const last = a.last_error ? "failed: " + a.last_error : a.last_poll_at ? dateLabel(a.last_poll_at) : "never";
    const lastCell = cell("Last read", last);
    if (a.last_error) lastCell.className = "error";
    tr.append(cell("Name", a.name + (a.enabled ? "" : " (off)")), cell("Mailbox", a.username + " at " + a.host),
      cell("Folders", a.folders.join(", ")), cell("Then", then), cell("Rules", String(a.rules.length)), lastCell);
    const td = el("td");
    const actions = [["Read now", () => poll(a.name)], ["Rules", () => showRules(a.name)], ["Remove", () => remove(a.name)]];
    for (const [label, act] of actions) {
      const b = el("button", label); b.type = "button"; b.setAttribute("aria-label", label + " " + a.name);
      b.addEventListener("click", act); td.append(b);
    }
    tr.append(td); return tr;
  }));
  if (chosen) showRules(chosen);
}
async function poll(name) {
  $("mail-state").textContent = "";
  try {
    const r = await api("POST", path(name) + "/poll");
    if (r.error) $("mail-state").textContent = name + ": " + r.error;
    else notice(name + ": " + r.folders.map((f) => f.folder + " " + f.read + " read, " + f.files + " files" + (f.more ? " (more to read)" : "")).join("; "));
  } catch (err) { $("mail-state").textContent = String(err.message); }
  await loadMailView();
}
async function remove(name) {
  if (!confirm("Remove the mail account " + name + "? The files it brought stay.")) return;
  try { await api("DELETE", path(name)); notice(name + " removed"); if (chosen === name) chosen = ""; $("mail-rules").classList.add("hidden"); }
  catch (err) { $("mail-state").textContent = String(err.message); }
  await loadMailView();
}
function showRules(name) {
  const a = accounts.find((x) => x.name === name);
  if (!a) { $("mail-rules").classList.add("hidden"); return; }
  chosen = name; $("rules-account").textContent = name; $("mail-rules").classList.remove("hidden");
  $("preview-table").classList.add("hidden");
  $("rules-list").replaceChildren(...a.rules.map((r, i) => {
    const when = [["from", r.sender], ["to", r.recipient], ["subject", r.subject], ["body", r.body],
      ["attachment", r.attachment_name], ["type", r.attachment_type]].filter(([, v]) => v).map(([k, v]) => k + " “" + v + "”");
    const li = el("li", r.name + ": " + (when.join(", ") || "every message") + " → " + (TAKES[r.take] || r.take)
      + (r.tags.length ? " · tags " + r.tags.join(", ") : ""));
    const b = el("button", "Remove"); b.type = "button"; b.setAttribute("aria-label", "Remove rule " + r.name);
    b.addEventListener("click", () => saveRules(a.rules.filter((_, j) => j !== i), r.name + " removed"));
    li.append(" ", b); return li;
  }));
}
async function saveRules(rules, said) {
  try { await api("PUT", path(chosen) + "/rules", { rules }); notice(said); }
  catch (err) { $("mail-state").textContent = String(err.message); }
  await loadMailView();
}
$("rule-form").addEventListener("submit", (e) => {
  e.preventDefault();
  const a = accounts.find((x) => x.name === chosen);
  if (!a) return;
  const opt = (id) => $(id).value.trim() || null;
  const rule = { name: $("rule-name").value.trim(), sender: opt("rule-from"), subject: opt("rule-subject"),
    attachment_name: opt("rule-attachment"), take: $("rule-take").value, tags: listed($("rule-tags").value) };
  saveRules([...a.rules.filter((r) => r.name !== rule.name), rule], rule.name + " saved").then(() => $("rule-form").reset());
});
$("rules-preview").addEventListener("click", async () => {
  $("mail-state").textContent = "";
  $("rules-preview").disabled = true;
  try {
    const found = await api("POST", path(chosen) + "/preview", {});
    $("preview-body").replaceChildren(...found.messages.map((m) => {
      const tr = el("tr");
      tr.append(cell("From", m.sender || ""), cell("Subject", m.subject), cell("Rule", m.rule || "none"), cell("Becomes", TAKES[m.take] || m.take));
      return tr;
    }));
    $("preview-table").classList.remove("hidden");
  } catch (err) { $("mail-state").textContent = String(err.message); }
  finally { $("rules-preview").disabled = false; }
});
$("mail-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const name = $("mail-name").value.trim().toLowerCase();
  const body = { host: $("mail-host").value.trim(), security: $("mail-security").value, username: $("mail-user").value.trim(),
    folders: listed($("mail-folders").value), after: $("mail-after").value };
  if ($("mail-port").value) body.port = Number($("mail-port").value);
  if ($("mail-secret").value) body.secret = $("mail-secret").value;
  if ($("mail-move").value.trim()) body.move_to = $("mail-move").value.trim();
  if ($("mail-address").value.trim()) body.address = $("mail-address").value.trim();
  $("mail-state").textContent = "";
  try { await api("PUT", path(name), body); notice(name + " saved"); $("mail-form").reset(); chosen = name; }
  catch (err) { $("mail-state").textContent = String(err.message); }
  await loadMailView();
});
