// Who is here: the signed-in user (their role and groups, for what the page offers them), and the People
// view, where an admin adds and changes users and groups (a member sees the names, to share with).
import { $, api, el, notice } from "./core.js";

/** @type {import("./core.js").PeopleOut | null} */
let people = null;
/** You and the tenant's users and groups, asked once per sign-in (again after a change). */
export async function loadPeople(fresh) {
  if (!people || fresh) people = await api("GET", "/people").catch(() => null);
  document.body.classList.toggle("is-admin", Boolean(people && people.me.admin));
  return people;
}
export function forgetPeople() { people = null; }
/** Whether the signed-in caller may share, link or delete a file (its owner, an admin, or nobody's file). */
export function mayChange(f) {
  if (!people) return false;
  return people.me.admin || !f.owner || f.owner === people.me.user;
}
// a cell with its column's name, which a phone shows before it (the header row is out of sight there)
const cell = (label, text) => { const td = el("td", text); td.dataset.label = label; return td; };
const listed = (text) => text.split(",").map((x) => x.trim()).filter(Boolean);

export async function loadPeopleView() {
  $("people-state").textContent = "";
  const p = await loadPeople(true);
  if (!p) { $("people-state").textContent = "The tenant's users could not be read just now."; return; }
  $("people-me").textContent = p.me.user
    ? "You are " + p.me.user + " (" + (p.me.admin ? "an admin: you see every file" : "a member") + ")"
      + (p.me.groups.length ? ", in " + p.me.groups.join(", ") : "") + "."
    : "This tenant has no users yet: every file is everyone's. Add a user to give files owners.";
  $("users-body").replaceChildren(...p.users.map((u) => {
    const tr = el("tr");
    tr.append(cell("Name", u.name), cell("Role", u.role), cell("Groups", u.groups.join(", ")), cell("Mail addresses", u.addresses.join(", ")));
    const td = el("td");
    if (p.me.admin) {
      const b = el("button", "Remove"); b.type = "button"; b.setAttribute("aria-label", "Remove user " + u.name);
      b.addEventListener("click", () => change("DELETE", "/people/users/" + encodeURIComponent(u.name), undefined, u.name + " removed"));
      td.append(b);
    }
    tr.append(td); return tr;
  }));
  $("groups-body").replaceChildren(...p.groups.map((g) => {
    const tr = el("tr");
    tr.append(cell("Name", g.name), cell("Members", g.members.join(", ")), cell("Mail addresses", g.addresses.join(", ")));
    const td = el("td");
    if (p.me.admin) {
      const b = el("button", "Remove"); b.type = "button"; b.setAttribute("aria-label", "Remove group " + g.name);
      b.addEventListener("click", () => change("DELETE", "/people/groups/" + encodeURIComponent(g.name), undefined, g.name + " removed"));
      td.append(b);
    }
    tr.append(td); return tr;
  }));
}
async function change(method, path, body, said) {
  try { await api(method, path, body); notice(said); await loadPeopleView(); }
  catch (err) { $("people-state").textContent = String(err.message); }
}
$("user-form").addEventListener("submit", (e) => {
  e.preventDefault();
  const name = $("user-name").value.trim().toLowerCase();
  if (!name) return;
  const body = { role: $("user-admin").checked ? "admin" : "member", groups: listed($("user-groups").value), addresses: listed($("user-addresses").value) };
  change("PUT", "/people/users/" + encodeURIComponent(name), body, name + " saved").then(() => { $("user-form").reset(); });
});
$("group-form").addEventListener("submit", (e) => {
  e.preventDefault();
  const name = $("group-name").value.trim().toLowerCase();
  if (!name) return;
  change("PUT", "/people/groups/" + encodeURIComponent(name), { addresses: listed($("group-addresses").value) }, name + " saved")
    .then(() => { $("group-form").reset(); });
});
