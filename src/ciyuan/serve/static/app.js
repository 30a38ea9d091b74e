// ciyuan serve: the playground page. Plain JavaScript, no build step, nothing fetched but this
// server's own API. Text from the server is always put in the page as text (textContent), never
// as HTML: a tokenizer's tokens can hold any characters.
"use strict";

const $ = (sel) => document.querySelector(sel);
const $$ = (sel) => Array.from(document.querySelectorAll(sel));

const state = {
  tokenizers: [],          // GET /api/tokenizers: [{name, origin, loaded, vocab_size, model, ...}]
  selected: [],            // names chosen in the Tokenize view, in the order they were chosen
  dictionaries: [],
  models: {},
  limits: {},
  encodeSeq: 0,            // answers to an older request than the latest are dropped
  encodedKey: null,        // the text and tokenizers the page shows
  segmentSeq: 0,
  text16: [0],             // UTF-16 index of every code point of the encoded text (offsets are code points)
  lastTrained: null,
};

// ---------------------------------------------------------------------------------------------
// Small helpers

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key.startsWith("data-")) node.setAttribute(key, value);
    else node[key] = value;
  }
  for (const child of children) node.append(child);
  return node;
}

function setStatus(message, isError = false) {
  const status = $("#status");
  status.textContent = message || "";
  status.classList.toggle("error", isError);
}

async function api(path, options = {}) {
  const response = await fetch(path, options);
  let data = null;
  try { data = await response.json(); } catch (e) { data = null; }
  if (!response.ok) {
    const message = (data && data.error) || `${response.status} ${response.statusText}`;
    const error = new Error(message);
    error.status = response.status;
    throw error;
  }
  return data;
}

const postJSON = (path, body) => api(path, {
  method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body),
});

function debounce(fn, ms) {
  let timer = null;
  return (...args) => { clearTimeout(timer); timer = setTimeout(() => fn(...args), ms); };
}

// Whitespace made visible: a space is a middle dot, a tab an arrow, a newline ↵ (then the line breaks).
function visible(text) {
  return text.replace(/ /g, "·").replace(/\t/g, "→").replace(/\r/g, "␍").replace(/\n/g, "↵\n");
}

function codePointIndex(text) {
  const index = [0];
  for (const ch of text) index.push(index[index.length - 1] + ch.length);
  return index;
}

function formatNumber(n) {
  return n === null || n === undefined ? "–" : Number(n).toLocaleString("en-US");
}

// ---------------------------------------------------------------------------------------------
// Tabs

function showView(name) {
  for (const button of $$("#tabs button")) button.classList.toggle("active", button.dataset.view === name);
  for (const view of $$(".view")) view.classList.toggle("active", view.id === `view-${name}`);
  if (name === "segment") runSegment();
  if (name === "plots") loadPlots();
}

// ---------------------------------------------------------------------------------------------
// The tokenizer list

async function refreshTokenizers() {
  const data = await api("/api/tokenizers");
  state.tokenizers = data.tokenizers;
  state.dictionaries = data.dictionaries;
  state.models = data.models;
  state.limits = data.limits;
  state.eval = data.eval;
  const known = new Set(state.tokenizers.map((t) => t.name));
  state.selected = state.selected.filter((n) => known.has(n));
  renderTokenizerList();
  renderDictionaries();
  renderModels();
  renderDecodeChoices();
  $("#allow-dirs").textContent = data.allow_dirs.length
    ? `Allowed folders: ${data.allow_dirs.join(", ")}`
    : "No folder is allowed: start ciyuan serve with --allow-dir DIR to load files by path.";
  return data;
}

function describeEntry(t) {
  if (t.error) return "failed to load";
  const parts = [];
  if (t.model) parts.push(t.model);
  if (t.vocab_size) parts.push(formatNumber(t.vocab_size));
  if (!t.loaded) parts.push("not loaded");
  parts.push(t.origin);
  return parts.join(" · ");
}

function renderTokenizerList() {
  const list = $("#tokenizer-list");
  list.replaceChildren();
  if (!state.tokenizers.length) {
    list.append(el("p", { class: "hint", text: "No tokenizer yet: name files on the command line, upload one, "
      + "or train one in the Train view." }));
    return;
  }
  for (const t of state.tokenizers) {
    const box = el("input", { type: "checkbox", value: t.name, checked: state.selected.includes(t.name) });
    box.addEventListener("change", () => {
      if (box.checked) { if (!state.selected.includes(t.name)) state.selected.push(t.name); }
      else state.selected = state.selected.filter((n) => n !== t.name);
      runEncode();
    });
    const label = el("label", { class: t.error ? "failed" : "", title: t.error || t.source || "" },
      box, el("span", { class: "name", text: t.name }), el("span", { class: "meta", text: describeEntry(t) }));
    label.dataset.name = t.name;
    list.append(label);
  }
}

// The decode box offers every tokenizer; it starts on the first one chosen.
function renderDecodeChoices() {
  const chooser = $("#decode-tokenizer");
  const current = chooser.value || state.selected[0];
  chooser.replaceChildren(...state.tokenizers.map((t) => el("option", { value: t.name, text: t.name })));
  if (current) chooser.value = current;
}

async function runDecode(event) {
  event.preventDefault();
  const out = $("#decode-text");
  const tokens = $("#decode-tokens");
  const raw = $("#decode-ids").value.trim();
  const ids = raw ? raw.split(/[\s,\[\]]+/).filter(Boolean).map(Number) : [];
  out.classList.remove("error");
  if (ids.some((i) => !Number.isInteger(i))) {
    out.textContent = "ids are whole numbers, separated by commas or spaces";
    out.classList.add("error");
    return;
  }
  try {
    const data = await postJSON("/api/decode", { tokenizer: $("#decode-tokenizer").value, ids });
    out.textContent = data.text;
    tokens.replaceChildren(...data.tokens.map((t, i) => {
      const span = el("span", { class: `tok c${i % 8} kind-${t.kind}`, text: t.token, title: `id ${t.id} · bytes ${t.bytes}` });
      span.dataset.id = t.id;
      return span;
    }));
    out.dataset.state = "ready";
  } catch (e) {
    out.textContent = e.message;
    out.classList.add("error");
    tokens.replaceChildren();
    out.dataset.state = "error";
  }
}

function select(name) {
  if (!state.selected.includes(name)) state.selected.push(name);
  renderTokenizerList();
}

async function uploadTokenizer(file) {
  setStatus(`Uploading ${file.name}…`);
  try {
    const entry = await api(`/api/upload/tokenizer?name=${encodeURIComponent(file.name)}`, { method: "PUT", body: file });
    await refreshTokenizers();
    select(entry.name);
    setStatus(`Loaded ${entry.name}.`);
    runEncode();
  } catch (e) {
    setStatus(`Upload failed: ${e.message}`, true);
  }
}

async function loadPath(path) {
  setStatus(`Loading ${path}…`);
  try {
    const entry = await postJSON("/api/tokenizers/load", { path });
    await refreshTokenizers();
    select(entry.name);
    setStatus(`Loaded ${entry.name}.`);
    runEncode();
  } catch (e) {
    setStatus(`Cannot load ${path}: ${e.message}`, true);
  }
}

// ---------------------------------------------------------------------------------------------
// Tokenize: tokens coloured one by one, counts, side by side, and where boundaries differ

function tokenLabel(t) {
  if (t.kind === "special" || t.kind === "unknown") return t.token;
  if (t.text === null) return visible(t.shown);     // not whole UTF-8: the cut bytes in hex
  if (t.text === "") return t.token || "∅";
  return visible(t.text);
}

function tokenTitle(t) {
  return `id ${t.id} · token ${JSON.stringify(t.token)} · bytes ${t.bytes || "(none)"} · chars ${t.start}–${t.end}`
    + (t.kind !== "text" ? ` · ${t.kind}` : "");
}

function renderCounts(counts, unit = "token") {
  const items = [[`${unit}s`, counts.tokens, "count-tokens"], ["characters", counts.characters, "count-chars"],
    ["bytes", counts.bytes, "count-bytes"], [`bytes/${unit}`, counts.bytes_per_token, "count-bpt"]];
  return el("dl", { class: "counts" }, ...items.map(([label, value, cls]) =>
    el("div", {}, el("dt", { text: label }), el("dd", { class: cls, text: formatNumber(value) }))));
}

function renderResult(result) {
  const entry = state.tokenizers.find((t) => t.name === result.name) || {};
  const tokens = el("div", { class: "tokens" });
  result.tokens.forEach((t, i) => {
    const span = el("span", { class: `tok c${i % 8} kind-${t.kind}`, text: tokenLabel(t), title: tokenTitle(t) });
    span.dataset.id = t.id;
    span.dataset.start = t.start;
    span.dataset.end = t.end;
    span.dataset.index = i;
    span.dataset.kind = t.kind;
    tokens.append(span);
  });
  if (result.hidden) {
    tokens.append(el("p", { class: "hint", text: `… and ${formatNumber(result.hidden)} more tokens, not drawn `
      + "(they are in the counts and the ids)" }));
  }
  const ids = el("details", { class: "ids" }, el("summary", { text: "ids" }), el("code", { text: result.ids.join(", ") }));
  const card = el("article", { class: "result" },
    el("header", {}, el("h3", { text: result.name }),
      el("span", { class: "model", text: [entry.model, entry.vocab_size && formatNumber(entry.vocab_size)].filter(Boolean).join(" · ") })),
    renderCounts(result.counts), tokens, ids);
  card.dataset.name = result.name;
  return card;
}

// The text with a mark at every position where some but not all segmentations cut.
function renderDiffer(container, countNode, text, differ, names) {
  container.replaceChildren();
  const chars = Array.from(text);
  let last = 0;
  for (const d of differ) {
    container.append(document.createTextNode(visible(chars.slice(last, d.pos).join(""))));
    const mark = el("span", { class: "cut", title: `cut here by ${d.by.join(", ")}; not by `
      + names.filter((n) => !d.by.includes(n)).join(", ") });
    mark.dataset.pos = d.pos;
    mark.dataset.by = d.by.join(",");
    container.append(mark);
    last = d.pos;
  }
  container.append(document.createTextNode(visible(chars.slice(last).join(""))));
  countNode.textContent = differ.length === 1 ? "1 position" : `${formatNumber(differ.length)} positions`;
}

async function runEncode() {
  const results = $("#results");
  const text = $("#text").value;
  // The same text and tokenizers as the page shows (a debounced keystroke after a click, say):
  // nothing to do, and the tokens on the page stay the same elements.
  const key = JSON.stringify([text, state.selected]);
  if (key === state.encodedKey && results.dataset.state === "ready") return;
  const seq = ++state.encodeSeq;
  if (!state.selected.length) {
    results.replaceChildren(el("p", { class: "hint", text: "Choose one or more tokenizers on the right." }));
    $("#differ").hidden = true;
    results.dataset.state = "ready";
    state.encodedKey = key;
    return;
  }
  results.dataset.state = "busy";
  try {
    const data = await postJSON("/api/encode", { text, tokenizers: state.selected });
    if (seq !== state.encodeSeq) return;
    state.text16 = codePointIndex(text);
    results.replaceChildren(...data.results.map(renderResult));
    const showDiffer = data.results.length > 1;
    $("#differ").hidden = !showDiffer;
    if (showDiffer) renderDiffer($("#differ-text"), $("#differ-count"), text, data.differ, state.selected);
    results.dataset.state = "ready";
    results.dataset.seq = seq;
    state.encodedKey = key;
    setStatus("");
    if (state.tokenizers.some((t) => state.selected.includes(t.name) && !t.loaded)) {
      refreshTokenizers();  // they are loaded now: show their sizes
    }
  } catch (e) {
    if (seq !== state.encodeSeq) return;
    results.replaceChildren(el("p", { class: "error", text: e.message }));
    results.dataset.state = "error";
    setStatus(e.message, true);
  }
}

const scheduleEncode = debounce(runEncode, 200);

// A click on a token selects its span in the text box and marks every token, in every
// tokenizer, that overlaps it.
function onTokenClick(event) {
  const span = event.target.closest(".tok");
  if (!span) return;
  const start = Number(span.dataset.start);
  const end = Number(span.dataset.end);
  for (const other of $$("#results .tok")) {
    const s = Number(other.dataset.start);
    const e = Number(other.dataset.end);
    other.classList.toggle("active", s < end && start < e || (s === start && e === end));
  }
  const textarea = $("#text");
  const a = state.text16[start] ?? 0;
  const b = state.text16[end] ?? a;
  textarea.focus();
  textarea.setSelectionRange(a, b);
  const shown = textarea.value.slice(a, b);
  const selection = $("#selection");
  selection.textContent = `characters ${start}–${end}: ${JSON.stringify(shown)}`;
  selection.dataset.start = start;
  selection.dataset.end = end;
}

function onTokenHover(event) {
  const span = event.target.closest(".tok");
  if (span) $("#token-info").textContent = `${span.closest(".result").dataset.name}: ${span.title}`;
}

// ---------------------------------------------------------------------------------------------
// Segment

const METHOD_NAMES = { fmm: "FMM", bmm: "BMM", bimm: "BiMM", dag: "DAG" };

function renderDictionaries() {
  const chooser = $("#seg-dict");
  const current = chooser.value;
  chooser.replaceChildren(...state.dictionaries.map((d) =>
    el("option", { value: d.name, text: `${d.name} (${formatNumber(d.words)} words)` })));
  if (current) chooser.value = current;
  $("#seg-hint").textContent = state.dictionaries.length
    ? "DAG needs a dictionary with word frequencies (jieba's format) to mean much."
    : "No dictionary: start ciyuan serve with --dict FILE.";
}

async function runSegment() {
  const seq = ++state.segmentSeq;
  const results = $("#seg-results");
  const methods = $$(".seg-method").filter((b) => b.checked).map((b) => b.value);
  const text = $("#seg-text").value;
  if (!methods.length) {
    results.replaceChildren(el("p", { class: "hint", text: "Choose one or more methods." }));
    $("#seg-differ").hidden = true;
    results.dataset.state = "ready";
    return;
  }
  if (!state.dictionaries.length) {
    results.replaceChildren(el("p", { class: "hint", text: "No dictionary: start ciyuan serve with --dict FILE." }));
    results.dataset.state = "ready";
    return;
  }
  results.dataset.state = "busy";
  try {
    const data = await postJSON("/api/segment", { text, methods, dictionary: $("#seg-dict").value || null });
    if (seq !== state.segmentSeq) return;
    results.replaceChildren(...data.methods.map((m) => {
      const words = el("div", { class: "tokens" });
      m.words.forEach((w, i) => {
        const span = el("span", { class: `word c${i % 2}`, text: visible(w.text), title: `characters ${w.start}–${w.end}` });
        span.dataset.start = w.start;
        span.dataset.end = w.end;
        words.append(span);
      });
      const nBytes = new TextEncoder().encode(text).length;
      const card = el("article", { class: "result" }, el("header", {}, el("h3", { text: METHOD_NAMES[m.method] || m.method })),
        renderCounts({ tokens: m.count, characters: Array.from(text).length, bytes: nBytes,
          bytes_per_token: m.count ? Math.round(1000 * nBytes / m.count) / 1000 : null }, "word"),
        words);
      card.dataset.method = m.method;
      return card;
    }));
    const showDiffer = data.methods.length > 1;
    $("#seg-differ").hidden = !showDiffer;
    if (showDiffer) renderDiffer($("#seg-differ-text"), $("#seg-differ-count"), text, data.differ, methods);
    results.dataset.state = "ready";
  } catch (e) {
    if (seq !== state.segmentSeq) return;
    results.replaceChildren(el("p", { class: "error", text: e.message }));
    results.dataset.state = "error";
  }
}

// ---------------------------------------------------------------------------------------------
// Train

function renderModels() {
  const chooser = $("#train-model");
  if (chooser.options.length) return;
  for (const [name, what] of Object.entries(state.models)) chooser.append(el("option", { value: name, text: `${name}: ${what}` }));
}

function trainStatus(message, stateName) {
  const status = $("#train-status");
  status.textContent = message;
  status.dataset.state = stateName;
}

async function startTraining(event) {
  event.preventDefault();
  const progress = $("#train-progress");
  $("#train-done").hidden = true;
  const body = { model: $("#train-model").value, vocab_size: Number($("#train-vocab").value) };
  const name = $("#train-name").value.trim();
  if (name) body.name = name;
  try {
    if ($("input[name=train-source]:checked").value === "file") {
      const file = $("#train-file").files[0];
      if (!file) throw new Error("choose a file to train on");
      trainStatus(`Uploading ${file.name}…`, "busy");
      const upload = await api(`/api/upload/corpus?name=${encodeURIComponent(file.name)}`, { method: "PUT", body: file });
      body.upload = upload.upload;
    } else {
      body.text = $("#text").value;
    }
    progress.removeAttribute("value");  // indeterminate until the first count
    trainStatus("Counting words…", "busy");
    const { job } = await postJSON("/api/train", body);
    await followJob(job.id);
  } catch (e) {
    progress.value = 0;
    trainStatus(`Training failed: ${e.message}`, "error");
  }
}

async function followJob(id) {
  const progress = $("#train-progress");
  for (;;) {
    const job = await api(`/api/train/${encodeURIComponent(id)}`);
    if (job.fraction !== null) progress.value = Math.round(100 * job.fraction);
    if (job.state === "done") {
      trainStatus(`Trained ${job.tokenizer}.`, "done");
      state.lastTrained = job.tokenizer;
      await refreshTokenizers();
      select(job.tokenizer);
      const link = $("#train-download");
      link.href = `/api/tokenizers/${encodeURIComponent(job.tokenizer)}/tokenizer.json`;
      $("#train-done").hidden = false;
      runEncode();
      return;
    }
    if (job.state === "error") throw new Error(job.error);
    if (job.state === "training") {
      const total = job.total && job.total < 2 ** 62 ? `/${formatNumber(job.total)}` : "";
      trainStatus(`${job.label}: ${formatNumber(job.done)}${total}`, "busy");
    } else {
      trainStatus(job.state === "queued" ? "Waiting for the previous run…" : "Counting words…", "busy");
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

// ---------------------------------------------------------------------------------------------
// Plots (ciyuan eval), when the server has them

// The columns of the metrics table, as ciyuan eval's report names them.
const METRIC_COLUMNS = [["tokenizer", "tokenizer"], ["corpus", "corpus"], ["tokens", "tokens"],
  ["bytes_per_token", "bytes/token"], ["chars_per_token", "chars/token"], ["fertility", "tokens/word"],
  ["vocab_use", "vocab used"], ["zipf_exponent", "Zipf s"], ["unk_rate", "unknown"],
  ["byte_fallback_rate", "byte fallback"], ["partial_char_rate", "partial chars"], ["renyi_efficiency", "Rényi eff."]];

function formatMetric(value) {
  if (value === null || value === undefined) return "–";
  if (typeof value === "number" && !Number.isInteger(value)) return value.toFixed(value < 1 ? 4 : 3);
  return typeof value === "number" ? formatNumber(value) : String(value);
}

function renderMetrics(rows) {
  const table = el("table", { class: "metrics" },
    el("thead", {}, el("tr", {}, ...METRIC_COLUMNS.map(([, label]) => el("th", { text: label })))),
    el("tbody", {}, ...rows.map((row) => {
      const tr = el("tr", {}, ...METRIC_COLUMNS.map(([key]) => el("td", { text: formatMetric(row[key]) })));
      tr.dataset.tokenizer = row.tokenizer;
      tr.dataset.corpus = row.corpus;
      tr.dataset.tokens = row.tokens;
      return tr;
    })));
  $("#eval-table").replaceChildren(table);
}

function loadPlots() {
  const info = state.eval || {};
  const hint = $("#eval-hint");
  $("#eval-start").disabled = Boolean(info.unavailable);
  if (info.unavailable) {
    hint.textContent = `Not available on this server: ${info.unavailable}.`;
    return;
  }
  hint.textContent = state.selected.length
    ? `Tokenizers: ${state.selected.join(", ")} (choose them in the Tokenize view).`
    : "Choose one or more tokenizers in the Tokenize view first.";
  const box = $("#eval-corpora");
  if (!box.children.length) {
    for (const name of info.corpora || []) {
      const input = el("input", { type: "checkbox", value: name, checked: name === "text" });
      input.className = "eval-corpus";
      box.append(el("label", {}, input, ` ${name === "text" ? "the text box" : name}`));
    }
  }
}

function evalStatus(message, stateName) {
  const status = $("#eval-status");
  status.textContent = message;
  status.dataset.state = stateName;
}

async function startEval(event) {
  event.preventDefault();
  const corpora = $$(".eval-corpus").filter((b) => b.checked).map((b) => b.value);
  const body = { tokenizers: state.selected, corpora, text: $("#text").value,
    curves: $("#eval-curves").checked, segment_words: $("#eval-segment").checked };
  const plots = $("#plots");
  plots.dataset.state = "busy";
  try {
    evalStatus("Starting…", "busy");
    const { job } = await postJSON("/api/eval", body);
    for (;;) {
      const run = await api(`/api/eval/${encodeURIComponent(job.id)}`);
      if (run.state === "done") {
        renderMetrics(run.report.metrics);
        // A plot of one bar per script is wide: it takes a whole row.
        plots.replaceChildren(...run.plots.map((p) => el("figure", { class: p.name.includes("by_script") ? "wide" : "" },
          el("img", { src: p.url, alt: p.name }), el("figcaption", { text: p.name }))));
        plots.dataset.state = "ready";
        evalStatus(`Measured ${run.report.tokenizers.length} tokenizer(s) on ${run.report.corpora.join(", ")}.`, "done");
        return;
      }
      if (run.state === "error") throw new Error(run.error);
      evalStatus(run.message || "Waiting…", "busy");
      await new Promise((resolve) => setTimeout(resolve, 400));
    }
  } catch (e) {
    plots.dataset.state = "error";
    evalStatus(`Measuring failed: ${e.message}`, "error");
  }
}

// ---------------------------------------------------------------------------------------------
// Start

function wire() {
  for (const button of $$("#tabs button")) button.addEventListener("click", () => showView(button.dataset.view));
  const textarea = $("#text");
  textarea.addEventListener("input", scheduleEncode);
  // A text file dropped on the text box becomes its text.
  textarea.addEventListener("dragover", (e) => { e.preventDefault(); textarea.classList.add("dragging"); });
  textarea.addEventListener("dragleave", () => textarea.classList.remove("dragging"));
  textarea.addEventListener("drop", async (e) => {
    e.preventDefault();
    textarea.classList.remove("dragging");
    const file = e.dataTransfer.files[0];
    if (!file) return;
    if (state.limits.request && file.size > state.limits.request) {
      setStatus(`${file.name} is over the server's request limit (${state.limits.request_text})`, true);
      return;
    }
    textarea.value = await file.text();
    runEncode();
  });
  $("#results").addEventListener("click", onTokenClick);
  $("#results").addEventListener("mouseover", onTokenHover);
  $("#upload-tokenizer").addEventListener("change", (e) => { if (e.target.files[0]) uploadTokenizer(e.target.files[0]); });
  $("#load-path").addEventListener("submit", (e) => { e.preventDefault(); loadPath($("#load-path-input").value.trim()); });
  $("#seg-text").addEventListener("input", debounce(runSegment, 200));
  for (const box of $$(".seg-method")) box.addEventListener("change", runSegment);
  $("#seg-dict").addEventListener("change", runSegment);
  $("#train-form").addEventListener("submit", startTraining);
  $("#train-use").addEventListener("click", () => showView("tokenize"));
  $("#eval-form").addEventListener("submit", startEval);
  $("#decode-form").addEventListener("submit", runDecode);
}

async function start() {
  wire();
  try {
    const data = await refreshTokenizers();
    // Start with what the command line named (at most two side by side).
    state.selected = data.tokenizers.filter((t) => t.origin === "command line").slice(0, 2).map((t) => t.name);
    renderTokenizerList();
    await runEncode();
    document.body.dataset.ready = "true";
  } catch (e) {
    setStatus(`The server did not answer: ${e.message}`, true);
  }
}

document.addEventListener("DOMContentLoaded", start);
