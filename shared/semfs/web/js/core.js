// The page's base: elements, the API call and who is signed in, the words shown for codes, the
// state every view shares, what this server can do, and the notice under the header.

/** An element of index.html by its id (tests/unit/test_web_page.py: every id the modules name is there).
 * @type {(id: string) => any} */
export const $ = (id) => document.getElementById(id);
/** The page's elements a CSS selector picks, as an array.
 * @type {(selector: string) => any[]} */
export const $$ = (selector) => [...document.querySelectorAll(selector)];
export const el = (tag, text, cls) => { const e = document.createElement(tag); if (text != null) e.textContent = text; if (cls) e.className = cls; return e; };
// what every view shares and changes: the file shown, a citation to open in it, the render in force,
// how many search results are asked for
export const state = { currentFile: null, pendingCite: null, renders: 0, searchLimit: 20 };
export const PAGE = 20;

// Where the API is and how people sign in. A page hosted apart from its API (AWS: CloudFront, the file
// written by scripts/post-deploy.sh) reads /static/config.json: {api, uploads: "presigned", auth: {client_id,
// scope, authorize_url, token_url, logout_url}}. Without one (semfs serve) the API is this origin and people sign in with a key.
export let config = {};
export async function loadConfig() {
  try {
    const res = await fetch("/static/config.json", { cache: "no-store" });
    config = res.ok ? await res.json() : {};
  } catch (err) { config = {}; }
  document.body.classList.toggle("provider-sign-in", Boolean(config.auth));
  document.body.classList.toggle("presigned-uploads", config.uploads === "presigned");
}
export const apiUrl = (path) => (config.api || "") + path;
// a key typed by the person (kept until they sign out), or the ID token the sign-in gave (this tab only)
export function key() { return (config.auth ? sessionStorage.getItem("semfs-token") : localStorage.getItem("semfs-key")) || ""; }
export const REFUSED_KEY = "This key was refused: it may have been revoked or mistyped. Sign in with a key from whoever runs semfs.";
export const ENDED = "Your sign-in has ended or was refused. Sign in again.";
export const refusedSentence = () => (config.auth ? ENDED : REFUSED_KEY);
/** What the API refused, with its status (and Retry-After, when it asked to be called again later). */
export class ApiError extends Error {
  /** @param {string} message @param {number} status @param {number} retryAfter */
  constructor(message, status, retryAfter) { super(message); this.status = status; this.retryAfter = retryAfter; }
}
// what a refused credential does to the page (signin.js says: signed out, with the sentence). core.js imports
// no module: every other one imports it, and a module evaluated inside an import cycle must find it ready
let refused = (/** @type {string} */ sentence) => {};
/** @param {(sentence: string) => void} then */
export function whenRefused(then) { refused = then; }
export async function api(method, path, body, raw) {
  const headers = { Authorization: "Bearer " + key() };
  let payload = raw;
  if (body !== undefined) { headers["Content-Type"] = "application/json"; payload = JSON.stringify(body); }
  let res;
  try { res = await fetch(apiUrl(path), { method, headers, body: payload }); }
  catch (err) { throw new Error("semfs is not answering (" + err.message + ")"); }
  const data = await res.json().catch(() => ({}));
  // a credential refused says so; with none yet, the sign-in's own sentence (if any) stays
  if (res.status === 401) refused(key() ? refusedSentence() : $("signin-error").textContent);
  if (!res.ok) {
    // people read the server's sentence, not a status code (the code stays on the error for the page's logic)
    const said = (data.error && data.error.message) || data.message;
    throw new ApiError(res.status === 401 ? refusedSentence()
      : said ? said.charAt(0).toUpperCase() + said.slice(1)
      : res.status >= 500 ? "semfs could not do this just now (it answered " + res.status + "). Try again in a moment."
      : "semfs refused this request (" + res.status + ").", res.status, Number(res.headers.get("Retry-After")) || 0);
  }
  return data;
}

// ---- formatting: what people read instead of raw MIME types, byte counts and timestamps
/** what people read for each MIME type semfs stores: the format registry's labels (extractors/formats.py; a test
 * compares them) */
export const TYPES = {
  "text/plain": "Text",
  "application/jsonl": "JSON lines",
  "text/markdown": "Markdown",
  "text/x-rst": "reStructuredText",
  "application/postscript": "PostScript",
  "text/calendar": "Calendar",
  "text/vcard": "Contact card",
  "application/json": "JSON",
  "application/x-ipynb+json": "Notebook",
  "application/rtf": "RTF",
  "application/yaml": "YAML",
  "application/xml": "XML",
  "text/csv": "CSV",
  "text/tab-separated-values": "TSV",
  "text/html": "Web page",
  "application/xhtml+xml": "Web page",
  "text/troff": "Manual page",
  "text/x-source": "Source code",
  "application/pdf": "PDF",
  "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "Word",
  "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "Excel",
  "application/vnd.openxmlformats-officedocument.presentationml.presentation": "PowerPoint",
  "application/msword": "Word (old)",
  "application/vnd.ms-excel": "Excel (old)",
  "application/vnd.ms-powerpoint": "PowerPoint (old)",
  "application/vnd.oasis.opendocument.text": "OpenDocument text",
  "application/vnd.oasis.opendocument.spreadsheet": "OpenDocument sheet",
  "application/vnd.oasis.opendocument.presentation": "OpenDocument presentation",
  "application/epub+zip": "EPUB",
  "application/vnd.ms-outlook": "Outlook message",
  "application/zip": "ZIP archive",
  "application/x-tar": "tar archive",
  "application/vnd.ms-tnef": "Outlook attachments (TNEF)",
  "message/rfc822": "Email",
  "image/png": "PNG image",
  "image/jpeg": "JPEG image",
  "image/tiff": "TIFF image",
  "image/gif": "GIF image",
  "image/webp": "WebP image",
  "application/gzip": "gzip",
  "application/x-bzip2": "bzip2",
  "application/x-xz": "xz",
};
// each outcome in words (the code stays in the title, for whoever reads docs/outcomes.md)
/** @typedef {import("./api").components["schemas"]} Schemas the API's bodies, from docs/openapi.json */
/** @typedef {Schemas["FileOut"]} FileOut */
/** @typedef {Schemas["PeopleOut"]} PeopleOut */
/** @typedef {Schemas["MailAccountsOut"]} MailAccountsOut */
/** @typedef {Schemas["MailAccountOut"]} MailAccountOut */
/** @typedef {Schemas["MailPreviewOut"]} MailPreviewOut */
/** @typedef {Schemas["MailPollOut"]} MailPollOut */
/** @type {Record<Schemas["Outcome"], string>} every outcome's words: the checker refuses a missing or an unknown one */
export const OUTCOMES = {
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
export const outcomeLabel = (f) => OUTCOMES[f.outcome] || f.outcome || f.status;
export function outcomeBadge(f) { const b = el("span", outcomeLabel(f), "badge warn"); if (f.outcome) b.title = f.outcome; return b; }
/** @type {Record<FileOut["source_type"], string>} */
export const SOURCES = { upload: "Upload", email_attachment: "Mail", agent_generated: "Agent" };
export const typeLabel = (mime) => TYPES[mime] || (mime || "").split("/").pop() || "file";
export function sizeLabel(bytes) {
  if (bytes == null) return "";
  const units = ["B", "KB", "MB", "GB"]; let n = bytes; let u = 0;
  while (n >= 1024 && u < units.length - 1) { n /= 1024; u += 1; }
  return (u === 0 ? String(n) : n.toFixed(n < 10 ? 1 : 0)) + " " + units[u];
}
export const dateLabel = (iso) => iso ? new Date(iso).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" }) : "";
// a day (YYYY-MM-DD, as purge dates are) in the same words as dateLabel's dates
export const dayLabel = (day) => day ? new Date(day + "T00:00:00").toLocaleDateString(undefined, { dateStyle: "medium" }) : "";
// what this server does (GET /capabilities): a feature switched off is not offered; its view, reached
// by an old link, says so instead of showing a form that would be refused
export let caps = null;
export const off = (feature) => Boolean(caps && caps[feature] && !caps[feature].on);
export async function loadCapabilities() {
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
export const stale = (mine) => mine !== state.renders;

// ---- a notice under the header (what a click did), with one action (Undo). It belongs to the view it was
// given on (or, with carry, to the view the click goes to next): opening another view clears it. With focus,
// its action takes the focus (after Delete the page's own button is gone; Undo is the next thing to reach).
export function notice(text, action, opts) {
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
export function keepNotice() {  // on every view change: a notice stays on its own view only
  const box = $("notice");
  if (!box) return;
  if (box.dataset.carry) { box.dataset.carry = ""; box.dataset.address = location.hash; return; }
  if (box.dataset.address !== location.hash) box.remove();
}
export const pause = (ms) => new Promise((ok) => setTimeout(ok, ms));
