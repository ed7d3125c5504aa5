import { $, api, el, stale, state } from "./core.js";
import { openFile } from "./file.js";
import { locationLabel } from "./search.js";

// A conversation: a follow-up is asked in the same scope, with the questions before it (the server reads
// the last two with it); the earlier turns stay above, each with its answer and sources.
export let conversation = [];  // the questions asked so far, oldest first
export function askScope() {
  const filters = {};
  if ($("a-tag").value.trim()) filters.tags = [$("a-tag").value.trim()];
  if ($("a-source").value) filters.source_type = $("a-source").value;
  const request = { filters };
  if ($("a-thread").value.trim()) request.thread_id = $("a-thread").value.trim();
  return request;
}
export async function askNow(question, follows) {
  $("answer").textContent = "Thinking…"; $("citations").replaceChildren(); $("followup-form").classList.add("hidden");
  const mine = state.renders;
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
export function renderAnswer(data, question) {
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
