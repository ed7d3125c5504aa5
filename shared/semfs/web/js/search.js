import { $, SOURCES, api, el, off, stale, state } from "./core.js";
import { go } from "./router.js";

export function snippetNode(s) {
  const p = el("p", null, "snippet"); let pos = 0;
  for (const [a, b] of s.highlights || []) { p.append(s.text.slice(pos, a), el("mark", s.text.slice(a, b))); pos = b; }
  p.append(s.text.slice(pos));
  p.append(el("span", "  (" + locationLabel(s.location) + ")", "muted"));
  return p;
}
export function locationLabel(loc) {
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
function resultItem(r) {
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
  return li;
}
export async function runSearch() {
  const tags = $("f-tags").value.split(",").map((t) => t.trim()).filter(Boolean);
  const filters = { tags, include_history: $("f-history").checked };
  for (const [field, id] of [["source_type", "f-source"], ["contact_id", "f-contact"], ["thread_id", "f-thread"],
                             ["mime_type", "f-mime"], ["date_from", "f-from"], ["date_to", "f-to"]]) {
    if ($(id).value) filters[field] = $(id).value;
  }
  $("search-state").textContent = "Searching…"; $("results").replaceChildren();
  const mine = state.renders;
  try {
    /** @type {import("./core.js").Schemas["SearchResponse"]} */
    const data = await api("POST", "/search", { query: $("q").value, mode: $("mode").value, limit: state.searchLimit, filters });
    if (stale(mine)) return;
    const strong = data.results.filter((r) => !r.weak), weak = data.results.filter((r) => r.weak);
    $("search-state").textContent = (strong.length ? data.results.length + " result(s)"
      : weak.length ? "No file answers “" + $("q").value + "” closely: " + weak.length
          + " weak match(es) share a word or a theme with it."
      : (data.left_out ? "Nothing here is about “" + $("q").value + "”: no file shares a word with it."
        : "No file matches “" + $("q").value + "”.") + " Try other words, or keyword mode for exact names and numbers.")
      + (data.degraded ? " — keyword only (" + (off("semantic") ? "semantic search is switched off" : "embeddings unavailable") + ")" : "");
    for (const r of strong) $("results").append(resultItem(r));
    if (weak.length && !strong.length) for (const r of weak) $("results").append(resultItem(r));
    else if (weak.length) {  // the floor labels, it does not hide: weaker matches are folded under the strong ones
      const fold = el("details", null, "weak-matches"); const list = el("ol", null, "results");
      fold.append(el("summary", "Show " + weak.length + " weaker match(es)"));
      for (const r of weak) list.append(resultItem(r));
      fold.append(list);
      const li = el("li", null, "more"); li.append(fold); $("results").append(li);
    }
    if (data.results.length === state.searchLimit && state.searchLimit < 100) {  // there may be more: ask for the next 20
      const more = el("button", "More results"); more.type = "button"; more.id = "search-more";
      more.addEventListener("click", () => go("search", { q: $("q").value, mode: $("mode").value, n: String(state.searchLimit + 20) }));
      const li = el("li", null, "more"); li.append(more); $("results").append(li);
    }
  } catch (err) { if (!stale(mine)) $("search-state").textContent = String(err.message); }
}
