// semfs web page: plain DOM, every string from a document or a model is inserted as text (escaped).
"use strict";
const $ = (id) => document.getElementById(id);
const el = (tag, text, cls) => { const e = document.createElement(tag); if (text != null) e.textContent = text; if (cls) e.className = cls; return e; };
let currentFile = null;
let pendingCite = null;
const PAGE = 20;

// Where the API is and how people sign in. A page hosted apart from its API (AWS: CloudFront, the file
// written by scripts/post-deploy.sh) reads /static/config.json: {api, uploads: "presigned", auth: {client_id,
// scope, authorize_url, token_url, logout_url}}. Without one (semfs serve) the API is this origin and people sign in with a key.
let config = {};
async function loadConfig() {
  try {
    const res = await fetch("/static/config.json", { cache: "no-store" });
    config = res.ok ? await res.json() : {};
  } catch (err) { config = {}; }
  document.body.classList.toggle("provider-sign-in", Boolean(config.auth));
  document.body.classList.toggle("presigned-uploads", config.uploads === "presigned");
}
const apiUrl = (path) => (config.api || "") + path;
// a key typed by the person (kept until they sign out), or the ID token the sign-in gave (this tab only)
function key() { return (config.auth ? sessionStorage.getItem("semfs-token") : localStorage.getItem("semfs-key")) || ""; }
const REFUSED_KEY = "This key was refused: it may have been revoked or mistyped. Sign in with a key from whoever runs semfs.";
const ENDED = "Your sign-in has ended or was refused. Sign in again.";
const refusedSentence = () => (config.auth ? ENDED : REFUSED_KEY);
async function api(method, path, body, raw) {
  const headers = { Authorization: "Bearer " + key() };
  let payload = raw;
  if (body !== undefined) { headers["Content-Type"] = "application/json"; payload = JSON.stringify(body); }
  let res;
  try { res = await fetch(apiUrl(path), { method, headers, body: payload }); }
  catch (err) { throw new Error("semfs is not answering (" + err.message + ")"); }
  const data = await res.json().catch(() => ({}));
  // a credential refused says so; with none yet, the sign-in's own sentence (if any) stays
  if (res.status === 401) signedOut(key() ? refusedSentence() : $("signin-error").textContent);
  if (!res.ok) {
    // people read the server's sentence, not a status code (the code stays on the error for the page's logic)
    const said = (data.error && data.error.message) || data.message;
    const err = new Error(res.status === 401 ? refusedSentence()
      : said ? said.charAt(0).toUpperCase() + said.slice(1)
      : res.status >= 500 ? "semfs could not do this just now (it answered " + res.status + "). Try again in a moment."
      : "semfs refused this request (" + res.status + ").");
    err.status = res.status;
    err.retryAfter = Number(res.headers.get("Retry-After")) || 0;
    throw err;
  }
  return data;
}

// ---- formatting: what people read instead of raw MIME types, byte counts and timestamps
const TYPES = {
  "application/pdf": "PDF", "text/plain": "Text", "text/markdown": "Markdown", "text/html": "Web page",
  "text/csv": "CSV", "message/rfc822": "Email", "application/vnd.ms-outlook": "Outlook message",
  "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "Word",
  "application/msword": "Word (old)", "application/vnd.ms-excel": "Excel (old)",
  "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "Excel",
  "application/vnd.openxmlformats-officedocument.presentationml.presentation": "PowerPoint",
  "application/vnd.ms-powerpoint": "PowerPoint (old)", "application/rtf": "RTF", "application/epub+zip": "EPUB",
  "application/vnd.oasis.opendocument.text": "OpenDocument text", "application/json": "JSON",
  "application/vnd.oasis.opendocument.spreadsheet": "OpenDocument sheet", "application/zip": "ZIP",
  "text/x-source": "Source code", "text/x-python": "Python", "application/yaml": "YAML", "text/yaml": "YAML",
  "application/xml": "XML", "text/xml": "XML", "application/x-ipynb+json": "Notebook",
  "image/png": "PNG image", "image/jpeg": "JPEG image", "image/tiff": "TIFF image", "image/webp": "WebP image",
};
// each outcome in words (the code stays in the title, for whoever reads docs/outcomes.md)
const OUTCOMES = {
  OK: "ready", OK_PARTIAL: "ready (read in part)", OK_ENRICH_FALLBACK: "ready (summary without the LLM)",
  SKIPPED_EMPTY: "empty", SKIPPED_NO_TEXT: "no text found", SKIPPED_UNSUPPORTED_TYPE: "a type semfs cannot read",
  SKIPPED_ENCRYPTED: "password-protected", SKIPPED_DUPLICATE: "a copy of a file already here",
  SKIPPED_EMAIL_VERDICT: "refused by the mail checks", SKIPPED_CANCELLED: "cancelled before it was read",
  REJECTED_TOO_LARGE: "too large", REJECTED_TYPE_MISMATCH: "not the type its name says",
  REJECTED_ARCHIVE_BOMB: "an archive that unpacks too far", REJECTED_UNSAFE_NAME: "an unsafe name",
  REJECTED_XML_ENTITY: "XML that declares entities", REJECTED_IMAGE_PIXELS: "an image with too many pixels",
  FAILED_PARSE: "could not be read", FAILED_TIMEOUT: "took too long to read", FAILED_MEMORY: "needed too much memory",
  FAILED_OCR: "OCR failed", FAILED_LLM: "the LLM failed", FAILED_EMBED: "embedding failed",
  FAILED_INDEX: "indexing failed", FAILED_CONFIG: "the model endpoint refused the key", FAILED_INTERNAL: "an internal error",
};
const outcomeLabel = (f) => OUTCOMES[f.outcome] || f.outcome || f.status;
function outcomeBadge(f) { const b = el("span", outcomeLabel(f), "badge warn"); if (f.outcome) b.title = f.outcome; return b; }
const SOURCES = { upload: "Upload", email_attachment: "Mail", agent_generated: "Agent" };
const typeLabel = (mime) => TYPES[mime] || (mime || "").split("/").pop() || "file";
function sizeLabel(bytes) {
  if (bytes == null) return "";
  const units = ["B", "KB", "MB", "GB"]; let n = bytes; let u = 0;
  while (n >= 1024 && u < units.length - 1) { n /= 1024; u += 1; }
  return (u === 0 ? String(n) : n.toFixed(n < 10 ? 1 : 0)) + " " + units[u];
}
const dateLabel = (iso) => iso ? new Date(iso).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" }) : "";
// a day (YYYY-MM-DD, as purge dates are) in the same words as dateLabel's dates
const dayLabel = (day) => day ? new Date(day + "T00:00:00").toLocaleDateString(undefined, { dateStyle: "medium" }) : "";

// ---- sign-in: the key is checked against the API, and a refused one is said plainly
function signedOut(message) {
  $("signin").classList.remove("hidden");
  $("signin-error").textContent = message || "";
  $("key-state").textContent = message ? "not signed in" : "";
  $("sign-out").classList.add("hidden");
  $("api-key").classList.remove("hidden"); $("sign-in").classList.remove("hidden");
  document.body.classList.add("signed-out");
}
async function checkKey() {
  if (!key()) { signedOut($("signin-error").textContent); return false; }  // (a failed sign-in's sentence stays)
  try {
    const data = await api("GET", "/status");
    $("signin").classList.add("hidden"); $("signin-error").textContent = "";
    $("key-state").textContent = "Signed in · tenant " + data.tenant;
    $("sign-out").classList.remove("hidden");
    $("api-key").classList.add("hidden"); $("sign-in").classList.add("hidden");
    document.body.classList.remove("signed-out");
    await loadCapabilities();
    return true;
  } catch (err) {
    if (!$("signin-error").textContent) signedOut(String(err.message));
    return false;
  }
}
// ---- signing in through the organisation's identity provider (Cognito's hosted UI, or the configured OIDC
// issuer): the authorization code flow with PKCE (RFC 7636), as a public client: no secret in the page.
// The verifier stays in this tab (sessionStorage) and only its SHA-256 travels to the provider; the state
// ties the answer to this request. The ID token it gives is what the API's JWT authorizer checks.
const b64url = (bytes) => btoa(String.fromCharCode(...new Uint8Array(bytes))).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
const redirectUri = () => location.origin + "/";
async function startSignIn() {
  const verifier = b64url(crypto.getRandomValues(new Uint8Array(32)));
  const state = b64url(crypto.getRandomValues(new Uint8Array(16)));
  const challenge = b64url(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier)));
  sessionStorage.setItem("semfs-pkce", JSON.stringify({ verifier, state, back: location.hash }));
  const query = new URLSearchParams({
    response_type: "code", client_id: config.auth.client_id, redirect_uri: redirectUri(),
    scope: config.auth.scope || "openid email", state, code_challenge: challenge, code_challenge_method: "S256",
  });
  location.assign(config.auth.authorize_url + "?" + query);
}
async function finishSignIn() {  // the provider sent the person back with ?code=…&state=… (or ?error=…)
  const answer = new URLSearchParams(location.search);
  if (!config.auth || !(answer.has("code") || answer.has("error"))) return;
  const saved = JSON.parse(sessionStorage.getItem("semfs-pkce") || "null");
  sessionStorage.removeItem("semfs-pkce");
  history.replaceState(null, "", location.pathname + ((saved && saved.back) || ""));  // the code is single-use
  if (answer.has("error") || !saved || answer.get("state") !== saved.state) {
    signedOut("Sign-in did not finish" + (answer.get("error") === "access_denied" ? ": access was refused." : ". Try again."));
    return;
  }
  try {
    const res = await fetch(config.auth.token_url, {
      method: "POST", headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "authorization_code", client_id: config.auth.client_id,
        code: answer.get("code"), redirect_uri: redirectUri(), code_verifier: saved.verifier }),
    });
    const tokens = await res.json().catch(() => ({}));
    if (!res.ok || !tokens.id_token) throw new Error(tokens.error || String(res.status));
    sessionStorage.setItem("semfs-token", tokens.id_token);
  } catch (err) { signedOut("Sign-in did not finish (" + err.message + "). Try again."); }
}
$("sign-in-here").addEventListener("click", () => startSignIn());
$("key-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  if (config.auth) { await startSignIn(); return; }
  const typed = $("api-key").value.trim(); if (!typed) return;
  localStorage.setItem("semfs-key", typed); $("api-key").value = "";
  if (await checkKey()) route(); else localStorage.removeItem("semfs-key");
});
// what this server does (GET /capabilities): a feature switched off is not offered; its view, reached
// by an old link, says so instead of showing a form that would be refused
let caps = null;
const off = (feature) => Boolean(caps && caps[feature] && !caps[feature].on);
async function loadCapabilities() {
  try { caps = await api("GET", "/capabilities"); } catch (err) { caps = null; }
  const navButton = (view) => document.querySelector("nav[aria-label=Views] button[data-view=" + view + "]");
  navButton("upload").classList.toggle("hidden", off("ingest"));
  $("upload-form").classList.toggle("hidden", off("ingest")); $("upload-off").classList.toggle("hidden", !off("ingest"));
  navButton("ask").classList.toggle("hidden", off("ask")); $("docs-ask").classList.toggle("hidden", off("ask"));
  $("ask-form").classList.toggle("hidden", off("ask")); $("ask-off").classList.toggle("hidden", !off("ask"));
  for (const o of $("mode").options) o.disabled = off("semantic") && o.value !== "keyword";
  if (off("semantic")) $("mode").value = "keyword";
  $("mode").title = off("semantic") ? "semantic search is switched off on this server: keyword search only" : "";
  $("similar-heading").classList.toggle("hidden", off("semantic")); $("file-similar").classList.toggle("hidden", off("semantic"));
  $("entities-off").classList.toggle("hidden", !off("entities"));
}
$("sign-out").addEventListener("click", () => {
  if (config.auth) {  // the provider's session ends too, or its next sign-in would not ask
    sessionStorage.removeItem("semfs-token");
    const query = new URLSearchParams({ client_id: config.auth.client_id, logout_uri: redirectUri() });
    if (config.auth.logout_url) { location.assign(config.auth.logout_url + "?" + query); return; }
    signedOut("");
    return;
  }
  localStorage.removeItem("semfs-key"); signedOut("");
});

// ---- views and the URL: every view has an address (#/documents?sort=name&page=2, #/file/<id>, …),
// so links can be shared and back/forward work
function show(view) {
  if (view !== "notfound") document.title = "semfs";
  document.querySelectorAll(".view").forEach((v) => v.classList.add("hidden"));
  $("view-" + view).classList.remove("hidden");
  document.querySelectorAll("nav[aria-label=Views] button").forEach((b) => b.classList.toggle("active", b.dataset.view === view));
}
function go(view, params) {
  const q = new URLSearchParams(params || {}).toString();
  const target = "#/" + view + (q ? "?" + q : "");
  if (location.hash === target) route(); else location.hash = target;
}
function route() {
  // a key that arrived since (another tab signed in) is checked first; a refused one is said, and the view opens
  if (document.body.classList.contains("signed-out") && key()) checkKey().then(render); else render();
}
// each render is numbered: a view's answer that arrives after the address changed again (a slow
// unfiltered list after the filtered one) is dropped instead of drawn over the newer one
let renders = 0;
const stale = (mine) => mine !== renders;
function render() {
  renders++;
  keepNotice();
  const [path, query] = location.hash.replace(/^#\/?/, "").split("?");
  const params = new URLSearchParams(query || "");
  const [view, id] = (path || "documents").split("/");
  if (view === "file" && id) { loadFile(decodeURIComponent(id)); return; }
  if (view === "entity" && params.get("name")) { loadEntity(params.get("name")); return; }
  const known = ["documents", "problems", "search", "ask", "upload", "status", "trash", "entities"];
  if (!known.includes(view)) { notFound(location.hash); return; }
  const name = view;
  show(name);
  if (name === "documents") loadDocs(params);
  if (name === "trash") loadTrash(params.get("restored"));
  if (name === "problems") loadProblems();
  if (name === "status") loadStatus();
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
    searchLimit = Math.min(100, parseInt(params.get("n") || "20", 10) || 20); runSearch();
  }
}
document.querySelectorAll("nav[aria-label=Views] button").forEach((b) => b.addEventListener("click", () => go(b.dataset.view)));
window.addEventListener("hashchange", route);
// an address that names no view (an old or mistyped link) says so, instead of showing Documents under it
function notFound(address) {
  show("notfound");
  $("notfound-address").textContent = address;
  document.title = "Not found · semfs";
}

// ---- documents: every file (latest versions), sorted, paged, filtered by names
const FILTERS = [["tag", "tag"], ["source", "source_type"], ["type", "mime_type"], ["thread", "thread_id"], ["contact", "contact_id"],
                 ["entity", "entity"], ["since", "since"], ["until", "until"]];
let docsFilters = {};  // the listing's filters as the URL has them (type comes from a facet, not a field)
function docsParams() {
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
let docsPage = 1;
let facetScope = {};  // the listing's scope, for "Show more" on its facets
async function loadDocs(params) {
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
  const mine = renders;
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
const FACETS = [["tag", "Tags", "tag"], ["type", "Type", "type"], ["source", "Source", "source"],
                ["thread", "Threads", "thread"], ["contact", "Contacts", "contact"], ["entity", "Names", "entity"],
                ["month", "Added", "month"]];
const entityNames = {};  // entity id → its label, from the facets: the active filter's chip shows the name
// On a phone the facets come first, folded behind one line (before, they came after twenty file cards);
// on a wider screen they are a column beside the list, open.
function renderFacets(data) {
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
      const mine = renders; const scope = new URLSearchParams({ ...facetScope, top: "500" });
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
function facetFilter(param, value) {
  if (param !== "month") return { [param]: value };
  const [y, m] = value.split("-").map(Number);  // a month: from its first day to the next month's
  const next = m === 12 ? (y + 1) + "-01" : y + "-" + String(m + 1).padStart(2, "0");
  return { since: value + "-01", until: next + "-01" };
}
function renderActive(params) {
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
const VIEW_KEYS = ["tag", "source", "type", "thread", "contact", "since", "until", "sort"];
let savedViews = [];
function viewParams(params) {
  const kept = {};
  for (const k of VIEW_KEYS) if (params.get(k)) kept[k] = params.get(k);
  return kept;
}
async function loadViews(params) {
  const mine = renders;
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
const selected = () => [...document.querySelectorAll("#docs-table tbody input[type=checkbox]:checked")].map((x) => x.value);
function selectionChanged() {
  const n = selected().length;
  $("bulk-form").classList.toggle("hidden", n === 0);
  $("bulk-count").textContent = n + " selected";
}
$("select-all").addEventListener("change", () => {
  document.querySelectorAll("#docs-table tbody input[type=checkbox]").forEach((x) => { x.checked = $("select-all").checked; });
  selectionChanged();
});
async function bulkTag(adding) {
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
async function bulkDelete() {
  const rows = [...document.querySelectorAll("#docs-table tbody input[type=checkbox]:checked")]
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
async function restoreMany(rows, then) {
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

function docRow(f) {
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

function snippetNode(s) {
  const p = el("p", null, "snippet"); let pos = 0;
  for (const [a, b] of s.highlights || []) { p.append(s.text.slice(pos, a), el("mark", s.text.slice(a, b))); pos = b; }
  p.append(s.text.slice(pos));
  p.append(el("span", "  (" + locationLabel(s.location) + ")", "muted"));
  return p;
}
function locationLabel(loc) {
  if (!loc) return "document";
  const parts = [];
  if (loc.page) parts.push("page " + loc.page);
  if (loc.sheet) parts.push("sheet " + loc.sheet + (loc.row_start ? " rows " + loc.row_start + "-" + (loc.row_end || loc.row_start) : ""));
  if (loc.slide) parts.push("slide " + loc.slide);
  if (loc.section) parts.push("§ " + loc.section);
  return parts.join(", ") || (loc.paragraph ? "paragraph " + loc.paragraph : "document");
}

$("search-form").addEventListener("submit", (e) => {  // the query goes in the URL: a search is a link
  e.preventDefault();
  go("search", { q: $("q").value, mode: $("mode").value });
});
let searchLimit = 20;
async function runSearch() {
  const tags = $("f-tags").value.split(",").map((t) => t.trim()).filter(Boolean);
  const filters = { tags, include_history: $("f-history").checked };
  for (const [field, id] of [["source_type", "f-source"], ["contact_id", "f-contact"], ["thread_id", "f-thread"],
                             ["mime_type", "f-mime"], ["date_from", "f-from"], ["date_to", "f-to"]]) {
    if ($(id).value) filters[field] = $(id).value;
  }
  $("search-state").textContent = "Searching…"; $("results").replaceChildren();
  const mine = renders;
  try {
    const data = await api("POST", "/search", { query: $("q").value, mode: $("mode").value, limit: searchLimit, filters });
    if (stale(mine)) return;
    $("search-state").textContent = (data.results.length ? data.results.length + " result(s)"
      : (data.left_out ? "Nothing is relevant enough to “" + $("q").value + "”: " + data.left_out
          + " file(s) share a word or a theme with it, none closely enough."
        : "No file matches “" + $("q").value + "”.") + " Try other words, or keyword mode for exact names and numbers.")
      + (data.degraded ? " — keyword only (" + (off("semantic") ? "semantic search is switched off" : "embeddings unavailable") + ")" : "");
    for (const r of data.results) {
      const li = el("li"); const title = el("a", r.title || r.filename, "result-title");
      title.href = "#/file/" + encodeURIComponent(r.file_id);
      li.append(title, el("span", r.filename, "badge"), el("span", SOURCES[r.source_type] || r.source_type, "badge"));
      if (r.weak) li.append(el("span", "weak match", "badge weak"));
      if (!r.is_latest) li.append(el("span", "v" + r.version + " (older version)", "badge"));
      if (r.origin && r.origin.agent) li.append(el("span", "by " + r.origin.agent + (r.origin.run_id ? " · " + r.origin.run_id : ""), "badge"));
      if (r.origin && r.origin.sender) li.append(el("span", "from " + r.origin.sender, "badge"));
      if (r.came_from && r.source_type === "upload") li.append(el("p", r.came_from, "muted came-from"));  // which "Copyright"
      if (r.summary) li.append(el("p", r.summary, "muted"));
      for (const s of r.snippets.slice(0, 2)) li.append(snippetNode(s));
      $("results").append(li);
    }
    if (data.results.length === searchLimit && searchLimit < 100) {  // there may be more: ask for the next 20
      const more = el("button", "More results"); more.type = "button"; more.id = "search-more";
      more.addEventListener("click", () => go("search", { q: $("q").value, mode: $("mode").value, n: String(searchLimit + 20) }));
      const li = el("li", null, "more"); li.append(more); $("results").append(li);
    }
  } catch (err) { if (!stale(mine)) $("search-state").textContent = String(err.message); }
}

function openFile(id, cite) { pendingCite = cite || null; go("file/" + encodeURIComponent(id)); }
// The file view shows one file: the one its address names. Before anything loads, and whenever that
// fails, nothing of a file seen before stays on it, and no action can reach one (issue 31: after a
// link to a missing id, Delete… stayed on screen and deleted the file viewed before).
function clearFile() {
  currentFile = null;
  $("file-loaded").classList.add("hidden");
  ["file-title", "file-meta", "file-summary", "auto-tags", "file-state", "link-state", "note-state"].forEach((id) => { $(id).textContent = ""; });
  ["file-tags", "file-entities", "file-notes", "file-history", "file-provenance", "file-versions", "file-similar", "preview", "file-text"].forEach((id) => $(id).replaceChildren());
  $("new-note").value = "";
}
async function loadFile(id) {
  const cite = pendingCite; pendingCite = null;
  show("file"); clearFile();
  $("file-title").textContent = "Opening…";
  let f;
  const mine = renders;
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
  currentFile = f;
  $("file-loaded").classList.remove("hidden");
  $("file-title").textContent = f.title || f.filename;
  $("file-meta").textContent = [f.filename, "v" + f.version, typeLabel(f.mime_type), sizeLabel(f.size_bytes),
    dateLabel(f.created_at), outcomeLabel(f)].filter(Boolean).join(" · ");
  $("file-summary").textContent = f.summary || "";
  renderTags(f);
  renderNotes(f);
  loadHistory(f, mine);
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
// ---- entities: what the files name (people, organisations, amounts, identifiers…), each with its page
const KINDS = { person: "person", organisation: "organisation", email: "email address", phone: "phone number",
                money: "amount", date: "date", identifier: "identifier" };
const entityLink = (e) => {
  const a = el("a", e.label); a.href = "#/entity?" + new URLSearchParams({ name: e.entity_id }).toString();
  a.title = (KINDS[e.kind] || e.kind) + (e.detail ? " (" + e.detail + ")" : ""); return a;
};
async function fileEntities(f, mine) {
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
async function loadEntities(params) {
  $("e-kind").value = params.get("kind") || ""; $("e-q").value = params.get("q") || "";
  const q = new URLSearchParams({ limit: "200" });
  if (params.get("kind")) q.set("kind", params.get("kind"));
  if (params.get("q")) q.set("q", params.get("q"));
  $("entities-state").textContent = "Loading…";
  const mine = renders;
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
async function loadEntity(name) {
  show("entity");
  $("entity-loaded").classList.add("hidden"); $("entity-state").textContent = ""; $("entity-meta").textContent = "";
  $("entity-title").textContent = "Opening…";
  const mine = renders;
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
async function similarTo(f, mine) {
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
async function preview(f, cite) {
  const box = $("preview"); box.replaceChildren();
  const inline = f.mime_type === "application/pdf" || /^image\/(png|jpeg|gif|webp)$/.test(f.mime_type);
  if (!inline) return;  // the extracted text beside it is the view of every other format
  // a link made to be shown (in S3 the signature covers it: a parameter added to it afterwards breaks it)
  const link = await api("GET", "/files/" + encodeURIComponent(f.file_id) + "/download?inline=true").catch(() => null);
  if (!link || !currentFile || currentFile.file_id !== f.file_id) return;
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
  const f = currentFile;
  if (!f) return;
  if (!window.confirm("Move “" + f.filename + "” to the trash? It leaves search at once; you can restore it from the Trash.")) return;
  try {
    const done = await api("DELETE", "/files/" + encodeURIComponent(f.file_id));
    notice("“" + f.filename + "” is in the trash" + (done.purge_on ? " until " + dayLabel(done.purge_on) : "") + ".",
           done.in_trash ? ["Undo", () => restoreFile(f.file_id, f.filename, "documents")] : null, { carry: true, focus: true });
    go("documents");
  } catch (err) { $("file-state").textContent = String(err.message); }
});

// ---- a notice under the header (what a click did), with one action (Undo). It belongs to the view it was
// given on (or, with carry, to the view the click goes to next): opening another view clears it. With focus,
// its action takes the focus (after Delete the page's own button is gone; Undo is the next thing to reach).
function notice(text, action, opts) {
  const { carry = false, focus = false } = opts || {};
  let box = $("notice");
  if (!box) { box = el("div", null, "notice"); box.id = "notice"; box.setAttribute("role", "status"); document.querySelector("main").prepend(box); }
  box.replaceChildren(el("span", text));  // its action names its file
  box.dataset.address = location.hash; box.dataset.carry = carry ? "1" : "";
  if (action) {
    const b = el("button", action[0]); b.type = "button"; b.id = "notice-action";
    b.addEventListener("click", () => { box.remove(); action[1](); });
    box.append(" ", b);
  }
  const x = el("button", "×", "dismiss"); x.type = "button"; x.setAttribute("aria-label", "Dismiss this notice");
  x.addEventListener("click", () => box.remove()); box.append(x);
  if (focus) (box.querySelector("#notice-action") || x).focus();
}
function keepNotice() {  // on every view change: a notice stays on its own view only
  const box = $("notice");
  if (!box) return;
  if (box.dataset.carry) { box.dataset.carry = ""; box.dataset.address = location.hash; return; }
  if (box.dataset.address !== location.hash) box.remove();
}
// ---- problems: files skipped or failed, each with its reason and what can be done about it
async function countProblems() {
  const mine = renders;
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
async function loadProblems() {
  const mine = renders; const list = $("problems-list");
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
function problemReason(f) {
  const label = outcomeLabel(f); const said = f.duplicate_of ? "the same bytes arrived before" : (f.error || "");
  if (said && said.toLowerCase().startsWith(label.toLowerCase())) {
    const b = el("span", said, "badge warn"); if (f.outcome) b.title = f.outcome; return [b];
  }
  return said ? [outcomeBadge(f), " " + said] : [outcomeBadge(f)];
}
function problemItem(f) {
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
async function restoreFile(id, name, then) {
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

// ---- trash: deleted files, newest first; restore one, erase one, or empty it
async function loadTrash() {
  const mine = renders;
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
const trashPicked = () => [...document.querySelectorAll("#trash-list input[type=checkbox]:checked")].map((x) => ({ id: x.value, name: x.dataset.name }));
$("restore-selected").addEventListener("click", () => { const rows = trashPicked(); if (rows.length) restoreMany(rows, "trash"); });
$("empty-trash").addEventListener("click", async () => {
  const n = $("trash-list").children.length;
  if (!window.confirm("Erase the " + n + " file(s) in the trash for good? This cannot be undone.")) return;
  try {
    const done = await api("DELETE", "/trash");
    notice(done.purged.length + " file(s) erased for good."); loadTrash();
  } catch (err) { $("trash-state").textContent = String(err.message); }
});
function renderTags(f) {
  $("file-tags").replaceChildren(...(f.tags || []).map((t) => {
    const span = el("span", (f.tag_labels || {})[t] || t, "tag"); const x = el("button", "×"); x.title = "remove " + t;
    x.addEventListener("click", async () => tagsChanged(f.file_id, await api("PATCH", "/files/" + f.file_id, { add_tags: [], remove_tags: [t] })));
    span.append(x); return span;
  }));
  $("auto-tags").textContent = "auto: " + (f.auto_tags || []).join(", ");
}
// Notes: each with who wrote it and when; removing one names it. Every action carries the id of the file
// it was drawn for, so a note never lands on a file another address opened meanwhile.
function renderNotes(f) {
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
function noteChanged(fileId, f) {
  if (!currentFile || currentFile.file_id !== fileId) return;  // another file is on screen now
  currentFile = f; $("note-state").textContent = ""; renderNotes(f); loadHistory(f, renders);
}
async function loadHistory(f, mine) {
  const data = await api("GET", "/files/" + encodeURIComponent(f.file_id) + "/history").catch(() => ({ entries: [] }));
  if (stale(mine) || !currentFile || currentFile.file_id !== f.file_id) return;
  const words = { received: "Received", versioned: "New version", processed: "Processed", tagged: "Tagged", untagged: "Tag removed",
    noted: "Note added", unnoted: "Note removed", trashed: "Moved to the trash", restored: "Restored", detached: "Detached", linked: "Linked" };
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
  if (!currentFile || !text) return;
  const fileId = currentFile.file_id;
  try {
    const f = await api("POST", "/files/" + encodeURIComponent(fileId) + "/notes", { text });
    if (currentFile && currentFile.file_id === fileId) $("new-note").value = "";
    noteChanged(fileId, f);
  } catch (err) { $("note-state").textContent = String(err.message); }
});
// the earlier version is picked by its name: the documents' names are offered as the field is used, and
// the one chosen is sent by its id (an id pasted in still works)
let linkNames = new Map();
$("link-to").addEventListener("focus", async () => {
  if (!currentFile) return;
  const fileId = currentFile.file_id;
  const page = await api("GET", "/files?limit=200&sort=name").catch(() => ({ files: [] }));
  if (!currentFile || currentFile.file_id !== fileId) return;
  linkNames = new Map();
  for (const f of page.files) {
    if (f.file_id === fileId || f.lineage_id === currentFile.lineage_id) continue;
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
  if (currentFile && typed && !target) { $("link-state").textContent = "Pick the earlier file from the list (start typing its name), or paste its id."; return; }
  if (!currentFile || !target) return;
  try {
    await api("POST", "/files/" + currentFile.file_id + "/link", { previous_version_id: target });
    $("link-to").value = ""; $("link-state").textContent = "";
    openFile(currentFile.file_id);
  } catch (err) { $("link-state").textContent = String(err.message); }
});
$("tag-form").addEventListener("submit", async (e) => {
  e.preventDefault(); const t = $("new-tag").value.trim(); if (!t || !currentFile) return;
  const fileId = currentFile.file_id;
  const f = await api("PATCH", "/files/" + fileId, { add_tags: [t], remove_tags: [] });
  if (currentFile && currentFile.file_id === fileId) $("new-tag").value = "";
  tagsChanged(fileId, f);
});
// a tag added or removed shows in the tags and in the history at once (the history waited for a reload)
function tagsChanged(fileId, f) {
  if (!currentFile || currentFile.file_id !== fileId) return;  // another file is on screen now
  currentFile = f; renderTags(f); loadHistory(f, renders);
}
$("back").addEventListener("click", () => { if (history.length > 1) history.back(); else go("documents"); });
$("download").addEventListener("click", async (e) => {
  e.preventDefault(); const link = await api("GET", "/files/" + currentFile.file_id + "/download"); window.location = link.url;
});

// A conversation: a follow-up is asked in the same scope, with the questions before it (the server reads
// the last two with it); the earlier turns stay above, each with its answer and sources.
let conversation = [];  // the questions asked so far, oldest first
function askScope() {
  const filters = {};
  if ($("a-tag").value.trim()) filters.tags = [$("a-tag").value.trim()];
  if ($("a-source").value) filters.source_type = $("a-source").value;
  const request = { filters };
  if ($("a-thread").value.trim()) request.thread_id = $("a-thread").value.trim();
  return request;
}
async function askNow(question, follows) {
  $("answer").textContent = "Thinking…"; $("citations").replaceChildren(); $("followup-form").classList.add("hidden");
  const mine = renders;
  let data;
  try { data = await api("POST", "/ask", { ...askScope(), question, follows }); }
  catch (err) { if (!stale(mine)) $("answer").textContent = String(err.message); return; }
  if (stale(mine)) return;
  conversation = [...follows, question];
  if (data.status !== "answered") $("answer").replaceChildren(el("p", question, "asked"), el("p", "No answer: " + data.reason));
  else renderAnswer(data, question);
  $("followup-form").classList.remove("hidden");
}
$("ask-form").addEventListener("submit", (e) => {
  e.preventDefault(); conversation = []; $("earlier").replaceChildren();
  askNow($("question").value, []);
});
$("followup-form").addEventListener("submit", (e) => {
  e.preventDefault();
  const q = $("followup").value.trim(); if (!q) return;
  const turn = el("section", null, "turn");  // the answer so far moves up, as it was
  turn.append(...[...$("answer").childNodes].map((n) => n.cloneNode(true)));
  const sources = $("citations").cloneNode(true); sources.removeAttribute("id");
  sources.querySelectorAll("[id]").forEach((n) => n.removeAttribute("id"));
  turn.append(sources); turn.querySelectorAll("a").forEach((a) => a.addEventListener("click", (ev) => { ev.preventDefault(); location.hash = a.getAttribute("href"); }));
  $("earlier").append(turn);
  $("followup").value = "";
  askNow(q, conversation);
});
$("ask-new").addEventListener("click", () => {
  conversation = []; $("earlier").replaceChildren(); $("answer").replaceChildren(); $("citations").replaceChildren();
  $("followup-form").classList.add("hidden"); $("question").value = ""; $("question").focus();
});

// An answer reads like one: a heading, who wrote it, and a numbered marker after each sentence a citation
// quotes (the extractive answer is made of them), or at the end for a citation the LLM's wording does not
// repeat word for word. Each marker and each citation opens the cited passage, highlighted in its file.
function renderAnswer(data, question) {
  const open = (c) => (ev) => { ev.preventDefault(); openFile(c.file_id, c); };
  const text = data.answer || "";
  const at = data.citations.map((c, i) => {
    const where = c.quote ? text.indexOf(c.quote) : -1;
    return { i, end: where < 0 ? text.length : where + c.quote.length };
  }).sort((a, b) => a.end - b.end || a.i - b.i);
  const body = el("p", "", "answer-text"); let from = 0;
  for (const m of at) {
    body.append(text.slice(from, m.end)); from = m.end;
    const c = data.citations[m.i]; const n = m.i + 1;
    const mark = el("a", "[" + n + "]", "marker"); mark.href = "#/file/" + encodeURIComponent(c.file_id);
    mark.setAttribute("aria-label", "source " + n + ": " + (c.filename || c.file_id));
    mark.addEventListener("click", open(c));
    const sup = el("sup"); sup.append(mark); body.append(sup);
  }
  body.append(text.slice(from));
  const by = data.method === "llm" ? "Written by the language model from the passages below"
    : "Sentences taken from your files, as they are written";
  $("answer").replaceChildren(...(question ? [el("p", question, "asked")] : []), el("h2", "Answer", "answer-title"), body,
    el("p", by + " · " + data.citations.length + " source" + (data.citations.length === 1 ? "" : "s"), "muted"));
  data.citations.forEach((c, i) => {
    const li = el("li"); li.id = "cite-" + (i + 1);
    const a = el("a", "“" + c.quote + "”", "citation"); a.href = "#/file/" + encodeURIComponent(c.file_id);
    a.addEventListener("click", open(c));
    li.append(a, el("span", " — " + (c.filename || c.file_id) + " (v" + c.version + "), " + locationLabel(c.location), "muted"));
    $("citations").append(li);
  });
  $("citations").setAttribute("aria-label", "Sources");
}

// ---- upload: many files at once (drop or choose), each followed through the pipeline's stages
const STAGES = ["received", "extracting", "ocr", "enriching", "embedding", "indexing", "indexed"];
const FINAL = ["indexed", "failed", "skipped", "deleted"];
const drop = $("drop");
["dragenter", "dragover"].forEach((t) => drop.addEventListener(t, (e) => { e.preventDefault(); drop.classList.add("over"); }));
["dragleave", "drop"].forEach((t) => drop.addEventListener(t, (e) => { e.preventDefault(); drop.classList.remove("over"); }));
drop.addEventListener("drop", (e) => uploadAll([...e.dataTransfer.files]));
drop.addEventListener("keydown", (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); $("upload-file").click(); } });
drop.addEventListener("click", () => $("upload-file").click());
$("upload-file").addEventListener("change", () => {
  const n = $("upload-file").files.length; $("upload-state").textContent = n ? n + " file(s) chosen: Upload sends them" : "";
});
$("upload-form").addEventListener("submit", (e) => { e.preventDefault(); uploadAll([...$("upload-file").files]); });
async function uploadAll(files) {
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
function uploadRow(name) {
  const li = el("li", null, "upload"); const bar = el("progress"); bar.max = STAGES.length - 1; bar.value = 0;
  bar.setAttribute("aria-label", name + " progress");
  li.append(el("span", name, "upload-name"), bar, el("span", "waiting", "upload-stage"));
  $("upload-list").prepend(li); return li;
}
const pause = (ms) => new Promise((ok) => setTimeout(ok, ms));
// AWS: the bytes go straight to the bucket through a presigned POST (the API takes at most a few MB), and the
// bucket's notice starts ingestion. The file's id follows from its identity (tenant, key, SHA-256), so the
// page asks for it with the key's SHA-256 and waits until the record exists; tags are added to it then.
async function sendDirect(file, stage) {
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
async function uploadOne(file, li) {
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
                             ["previous_version_id", "upload-previous"]]) {
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
function showResult(li, rec) {
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

// ---- status: live while it is open (polled every 3 s)
let statusTimer = null;
window.addEventListener("hashchange", () => { if (!location.hash.startsWith("#/status")) { clearInterval(statusTimer); statusTimer = null; } });
async function loadStatus() {
  $("status-state").textContent = "";
  try {
    await renderStatus();
    $("status-updated").textContent = "updated " + new Date().toLocaleTimeString() + " · refreshes every 3 s";
  } catch (err) { $("status-state").textContent = String(err.message); clearInterval(statusTimer); statusTimer = null; return; }
  if (!statusTimer) statusTimer = setInterval(() => { if (!document.hidden) loadStatus(); }, 3000);
}
// The overview: what there is (documents, problems, the queue, the trash, each a link to its view), what
// arrived last, then the counts by status and outcome, the queue and the failed files
async function renderTiles() {
  const [docs, problems, trashed, recent] = await Promise.all([
    api("GET", "/files/facets"), api("GET", "/files/facets?listing=problems"),
    api("GET", "/trash?limit=1"), api("GET", "/files?limit=5&sort=newest")]);
  const count = (f) => f.total.toLocaleString() + (f.capped ? "+" : "");
  $("tile-documents").textContent = count(docs); $("tile-problems").textContent = count(problems);
  $("tile-trash").textContent = trashed.total.toLocaleString();
  $("recent").replaceChildren(...(recent.files.length ? recent.files.map((f) => {
    const li = el("li"); const a = el("a", f.title || f.filename, "doc-title"); a.href = "#/file/" + encodeURIComponent(f.file_id);
    li.append(a, el("span", " " + [f.filename, dateLabel(f.created_at), f.came_from].filter(Boolean).join(" · "), "muted"));
    return li;
  }) : [el("li", "No files yet: upload some, or point semfs at a folder.", "muted")]));
}
async function renderStatus() {
  await renderTiles();
  const data = await api("GET", "/status");
  $("status-table").tBodies[0].replaceChildren(...data.counts.map((c) => {
    const tr = el("tr"); tr.append(el("td", c.status), el("td", c.outcome || "-"), el("td", String(c.count))); return tr;
  }));
  const queue = await api("GET", "/jobs");
  $("tile-queue").textContent = queue.jobs.length.toLocaleString();
  if (!queue.jobs.length) $("jobs").replaceChildren(el("li", "Nothing is waiting: every file that arrived has been read.", "muted"));
  else $("jobs").replaceChildren(...queue.jobs.map((j) => {
    const li = el("li", j.filename + " — " + (j.state === "queued" ? "queued" : j.stage));
    if (j.state === "queued") {
      const b = el("button", "Cancel"); b.dataset.cancel = j.file_id;
      b.addEventListener("click", async () => { await api("POST", "/files/" + j.file_id + "/cancel"); loadStatus(); });
      li.append(" ", b);
    }
    return li;
  }));
  const failed = await api("GET", "/files?status=failed&limit=50");
  if (!failed.files.length) { $("failed").replaceChildren(el("li", "No file failed.", "muted")); return; }
  $("failed").replaceChildren(...failed.files.map((f) => {
    const li = el("li", f.filename + " — " + f.outcome + ": " + (f.error || "")); const b = el("button", "Retry");
    b.dataset.retry = f.file_id;
    b.addEventListener("click", async () => {
      b.disabled = true; b.textContent = "Retrying…";
      try { const r = await api("POST", "/files/" + f.file_id + "/retry"); li.firstChild.textContent = f.filename + " — " + r.status + "… "; }
      catch (err) { b.textContent = String(err.message); return; }
      loadStatus();
    });
    li.append(" ", b); return li;
  }));
}

loadConfig().then(finishSignIn).then(checkKey).then(route);

// ---- the keyboard: "/" search, j/k through a list, Enter opens, "g" then a letter goes to a view, "?" lists them.
// Typing in a field is never taken for a shortcut; Esc leaves the field.
const GO_TO = { d: "documents", s: "search", a: "ask", e: "entities", p: "problems", t: "trash", u: "upload", o: "status" };
let awaitingView = false;
function listLinks() {
  return [...document.querySelectorAll(".view:not(.hidden) a.doc-title, .view:not(.hidden) a.result-title")];
}
function moveInList(step) {
  const links = listLinks(); if (!links.length) return;
  const at = links.indexOf(document.activeElement);
  const next = links[at < 0 ? 0 : Math.max(0, Math.min(links.length - 1, at + step))];
  next.focus(); (next.closest("tr, li") || next).scrollIntoView({ block: "nearest" });
}
$("show-shortcuts").addEventListener("click", () => $("shortcuts").showModal());
document.addEventListener("keydown", (e) => {
  if (e.ctrlKey || e.metaKey || e.altKey || $("shortcuts").open) return;
  if (e.target.closest && e.target.closest("input, textarea, select, [contenteditable]")) {
    if (e.key === "Escape") e.target.blur();
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
