// MotionServer Playground, part one: the document editor, the track plot, the stage and the
// transport (tools.js adds export, live sessions, the spring designer and the start-up).
// Edit a timeline document, see its tracks, play it, steer a live
// session, design a spring and copy any export. Plain JavaScript, no dependencies; every
// request goes to the service that served this page.
"use strict";

const SVG_NS = "http://www.w3.org/2000/svg";
const $ = (id) => document.getElementById(id);
const LINE_HEIGHT = 20;      // px, must match .editor textarea in playground.css
const EDITOR_PAD = 10;       // px, textarea padding-top
const MAX_PLOTTED_TRACKS = 300;   // rows the plot draws (the rest are named in its hint)
const MAX_STAGE_ELEMENTS = 300;   // elements the stage draws
const MAX_EVENT_MARKS = 1000;     // events the plot marks
const PALETTE = ["#7aa2f7", "#f7b32b", "#3ecf8e", "#ff6f91", "#b48ead", "#4fd1c5", "#ff9e64",
                 "#c0caf5", "#9ece6a", "#e0af68", "#f7768e", "#73daca"];
const CHANNEL_COLOURS = { red: "#ff6b6b", green: "#51cf66", blue: "#5c9cff", alpha: "#adb5bd" };
const EXPORT_FORMATS = [
  { id: "csv", label: "CSV" }, { id: "css", label: "CSS" }, { id: "waapi", label: "Web Animations" },
  { id: "lottie", label: "Lottie" }, { id: "svg", label: "SVG plot" }];

const state = {
  examples: [],          // the examples this server accepts
  text: "",
  doc: null,             // the last document that parsed
  timeline: null,        // the last good /v1/timelines answer (tracks layout)
  model: null,           // elements derived from the document and the timeline
  time: 0,
  playing: false,
  lastTick: 0,
  formats: ["document", "json"],
  exportFormat: "document",
  exportCache: new Map(),
  springs: false,
  live: null,            // { id, reader, values, duration, state }
  requestSerial: 0,
};

// ---------------------------------------------------------------------------------------
// Small helpers

function el(tag, attrs, parent) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, value);
  if (parent) parent.appendChild(node);
  return node;
}

function html(tag, props, parent) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (key === "text") node.textContent = value;
    else if (key === "dataset") Object.assign(node.dataset, value);
    else if (key in node) node[key] = value;
    else node.setAttribute(key, value);
  }
  if (parent) parent.appendChild(node);
  return node;
}

function debounce(fn, ms) {
  let timer = 0;
  return (...args) => { clearTimeout(timer); timer = setTimeout(() => fn(...args), ms); };
}

function fmt(value, digits = 3) {
  if (value === null || value === undefined) return "—";
  if (typeof value !== "number") return String(value);
  if (!isFinite(value)) return String(value);
  const abs = Math.abs(value);
  if (abs !== 0 && (abs >= 1e6 || abs < 1e-3)) return value.toExponential(2);
  return String(Number(value.toFixed(digits)));
}

function setStatus(text, kind) {
  const node = $("status");
  node.textContent = text;
  node.className = "status" + (kind ? " " + kind : "");
}

async function post(path, body, accept) {
  const response = await fetch(path, {
    method: "POST", headers: { "Content-Type": "application/json", ...(accept ? { Accept: accept } : {}) },
    body: typeof body === "string" ? body : JSON.stringify(body) });
  const type = response.headers.get("Content-Type") || "";
  const text = await response.text();
  let json = null;
  if (type.includes("json")) { try { json = JSON.parse(text); } catch (_) { json = null; } }
  return { status: response.status, ok: response.ok, type, text, json };
}

async function copyText(text, button) {
  try {
    await navigator.clipboard.writeText(text);
  } catch (_) {
    const area = html("textarea", { value: text }, document.body);
    area.select();
    document.execCommand("copy");
    area.remove();
  }
  if (button) {
    const label = button.textContent;
    button.textContent = "Copied";
    button.classList.add("done");
    setTimeout(() => { button.textContent = label; button.classList.remove("done"); }, 1200);
  }
}

// ---------------------------------------------------------------------------------------
// JSON with positions: the line of every value and member key, by JSON pointer, so that a
// problem's pointer can be shown beside its line.

class JSONSyntaxError extends Error {
  constructor(message, line) { super(message); this.line = line; }
}

function locateJSON(text) {
  const lines = new Map();
  let i = 0, line = 1;
  const skip = () => {
    while (i < text.length) {
      const c = text[i];
      if (c === "\n") { line++; i++; }
      else if (c === " " || c === "\t" || c === "\r") i++;
      else break;
    }
  };
  const fail = (what) => { throw new JSONSyntaxError(what, line); };
  const escape = (key) => key.replace(/~/g, "~0").replace(/\//g, "~1");
  const string = () => {
    const start = i;
    i++;
    while (i < text.length && text[i] !== '"') {
      if (text[i] === "\\") i++;
      else if (text[i] === "\n") fail("a string may not run past the end of its line");
      i++;
    }
    if (i >= text.length) fail("unterminated string");
    i++;
    try { return JSON.parse(text.slice(start, i)); } catch (_) { return fail("malformed string"); }
  };
  const value = (pointer) => {
    skip();
    if (!lines.has(pointer)) lines.set(pointer, line);
    const c = text[i];
    if (c === "{") {
      i++; skip();
      if (text[i] === "}") { i++; return; }
      for (;;) {
        skip();
        if (text[i] !== '"') fail("expected a quoted member name");
        const keyLine = line;
        const key = string();
        lines.set(pointer + "/" + escape(key), keyLine);
        skip();
        if (text[i] !== ":") fail("expected ':' after \"" + key + "\"");
        i++;
        value(pointer + "/" + escape(key));
        skip();
        if (text[i] === ",") { i++; continue; }
        if (text[i] === "}") { i++; return; }
        fail("expected ',' or '}' in an object");
      }
    } else if (c === "[") {
      i++; skip();
      if (text[i] === "]") { i++; return; }
      for (let index = 0; ; index++) {
        value(pointer + "/" + index);
        skip();
        if (text[i] === ",") { i++; continue; }
        if (text[i] === "]") { i++; return; }
        fail("expected ',' or ']' in an array");
      }
    } else if (c === '"') {
      string();
    } else {
      const match = /^(-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?|true|false|null)/.exec(text.slice(i, i + 400));
      if (!match) fail(i >= text.length ? "the document ends too early" : "unexpected '" + text[i] + "'");
      i += match[0].length;
    }
  };
  value("");
  skip();
  if (i < text.length) fail("unexpected text after the document");
  return lines;
}

/// The editor line a pointer names: the pointer itself, or its nearest existing ancestor
/// (a missing field is reported on the object that should hold it).
function lineOfPointer(lines, pointer) {
  let p = pointer || "";
  for (;;) {
    if (lines.has(p)) return lines.get(p);
    if (p === "") return 1;
    p = p.slice(0, p.lastIndexOf("/"));
  }
}

// ---------------------------------------------------------------------------------------
// Editor: a textarea with a line-number gutter and problem marks beside their lines.

const editor = $("editor");

function renderGutter() {
  const count = editor.value.split("\n").length;
  const gutter = $("gutter");
  if (gutter.childElementCount !== count) {
    gutter.textContent = "";
    for (let n = 1; n <= count; n++) html("div", { text: String(n) }, gutter);
  }
  syncScroll();
}

function syncScroll() {
  $("gutter").style.transform = `translateY(${-editor.scrollTop}px)`;
  $("marks").style.transform = `translateY(${-editor.scrollTop}px)`;
  placeMarks();
}

let charWidth = 0;
/// The width of one character of the editor's monospace font.
function editorCharWidth() {
  if (!charWidth) {
    const context = document.createElement("canvas").getContext("2d");
    const style = getComputedStyle(editor);
    context.font = `${style.fontSize} ${style.fontFamily}`;
    charWidth = context.measureText("0123456789").width / 10 || 7.8;
  }
  return charWidth;
}

/// Each message sits just after the end of its line when there is room, otherwise at the
/// right edge over the line's end (on an opaque label).
function placeMarks() {
  const lines = editor.value.split("\n");
  const room = editor.clientWidth;
  for (const text of document.querySelectorAll("#marks .mark-text")) {
    const line = Number(text.parentElement.dataset.line);
    const end = 12 + (lines[line - 1] || "").replace(/\t/g, "  ").length * editorCharWidth() - editor.scrollLeft + 18;
    const width = text.offsetWidth;
    if (end + width <= room - 8 && end >= 12) {
      text.style.left = `${end}px`;
      text.style.right = "auto";
      text.classList.remove("over");
    } else {
      text.style.left = "auto";
      text.style.right = "8px";
      text.classList.add("over");
    }
  }
}

function showProblems(problems) {
  const marks = $("marks"), list = $("problems"), gutter = $("gutter");
  marks.textContent = "";
  list.textContent = "";
  for (const row of gutter.children) row.classList.remove("bad");
  const byLine = new Map();
  for (const problem of problems) {
    if (!byLine.has(problem.line)) byLine.set(problem.line, []);
    byLine.get(problem.line).push(problem);
  }
  for (const [line, entries] of byLine) {
    const mark = html("div", { className: "mark", dataset: { line: String(line), pointer: entries[0].pointer || "" } }, marks);
    mark.style.top = `${EDITOR_PAD + (line - 1) * LINE_HEIGHT}px`;
    html("span", { className: "mark-text", text: entries.map((e) => e.message).join(" · ") }, mark);
    if (gutter.children[line - 1]) gutter.children[line - 1].classList.add("bad");
  }
  for (const problem of problems) {
    const item = html("li", { className: "problem", dataset: { line: String(problem.line), pointer: problem.pointer || "" } }, list);
    html("span", { className: "where", text: problem.pointer ? problem.pointer : "line " + problem.line }, item);
    html("span", { text: problem.message }, item);
    item.addEventListener("click", () => revealLine(problem.line));
  }
  $("editor-box").classList.toggle("has-problems", problems.length > 0);
  placeMarks();
}

function revealLine(line) {
  const lines = editor.value.split("\n");
  let offset = 0;
  for (let n = 1; n < line; n++) offset += lines[n - 1].length + 1;
  editor.focus();
  editor.setSelectionRange(offset, offset + (lines[line - 1] || "").length);
  editor.scrollTop = Math.max(0, (line - 4) * LINE_HEIGHT);
  syncScroll();
}

editor.addEventListener("scroll", syncScroll);
editor.addEventListener("keydown", (event) => {
  if (event.key === "Tab" && !event.shiftKey) {
    event.preventDefault();
    document.execCommand("insertText", false, "  ");
  } else if (event.key === "Enter") {
    // keep the current line's indentation
    const start = editor.selectionStart;
    const lineStart = editor.value.lastIndexOf("\n", start - 1) + 1;
    const indent = /^[ \t]*/.exec(editor.value.slice(lineStart, start))[0];
    const extra = /[{[]\s*$/.test(editor.value.slice(lineStart, start)) ? "  " : "";
    event.preventDefault();
    document.execCommand("insertText", false, "\n" + indent + extra);
  }
});
editor.addEventListener("input", () => { renderGutter(); scheduleRun(); });

$("format").addEventListener("click", () => {
  try { setEditorText(prettyJSON(JSON.parse(editor.value))); scheduleRun(); } catch (_) { runNow(); }
});

/// Indented JSON that keeps short arrays and small objects on one line, as people write it.
function inlineJSON(value) {
  if (Array.isArray(value)) return "[" + value.map(inlineJSON).join(", ") + "]";
  if (value && typeof value === "object") {
    const members = Object.entries(value).map(([k, v]) => JSON.stringify(k) + ": " + inlineJSON(v));
    return members.length ? "{ " + members.join(", ") + " }" : "{}";
  }
  return JSON.stringify(value);
}

function prettyJSON(value, indent = "") {
  const inline = inlineJSON(value);
  if (inline.length + indent.length <= 90 && indent !== "") return inline;
  const inner = indent + "  ";
  if (Array.isArray(value)) {
    return "[\n" + value.map((v) => inner + prettyJSON(v, inner)).join(",\n") + "\n" + indent + "]";
  }
  return "{\n" + Object.entries(value).map(([k, v]) => inner + JSON.stringify(k) + ": " + prettyJSON(v, inner)).join(",\n") + "\n" + indent + "}";
}

function setEditorText(text) {
  editor.value = text;
  editor.scrollTop = 0;
  renderGutter();
}

// ---------------------------------------------------------------------------------------
// Running the document

const scheduleRun = debounce(() => runNow(), 350);

async function runNow() {
  const text = editor.value;
  state.text = text;
  let lines;
  try {
    lines = locateJSON(text);
  } catch (error) {
    if (!(error instanceof JSONSyntaxError)) throw error;
    showProblems([{ line: error.line, pointer: "", message: "JSON: " + error.message }]);
    markStale("The document is not valid JSON");
    return;
  }
  const doc = JSON.parse(text);
  state.doc = doc;
  const serial = ++state.requestSerial;
  setStatus("Computing…", "busy");
  let answer;
  try {
    answer = await post("/v1/timelines", forPage(doc));
  } catch (error) {
    setStatus("The server cannot be reached", "bad");
    return;
  }
  if (serial !== state.requestSerial) return;   // a newer edit is on its way
  if (!answer.ok) {
    const problem = answer.json || {};
    const errors = Array.isArray(problem.errors) && problem.errors.length ? problem.errors
      : [{ pointer: "", message: problem.detail || problem.title || `HTTP ${answer.status}` }];
    showProblems(errors.map((e) => ({ pointer: e.pointer || "", message: e.message + (e.parameter ? ` (${e.parameter})` : ""),
                                      line: lineOfPointer(lines, e.pointer || "") })));
    markStale(`${answer.status} · ${problem.title || "the document was refused"}`);
    return;
  }
  showProblems([]);
  state.timeline = answer.json;
  state.model = buildModel(doc, answer.json);
  state.exportCache.clear();
  document.body.classList.remove("stale");
  const t = answer.json;
  setStatus(`${t.tracks.length} track${t.tracks.length === 1 ? "" : "s"} · ${t.frameCount} frames · ${fmt(t.window.end - t.window.start)} s`, "ok");
  const scrub = $("scrub");
  scrub.min = t.window.start;
  scrub.max = t.window.end;
  scrub.step = "any";
  state.time = Math.min(Math.max(state.time, t.window.start), t.window.end);
  renderStage();
  renderPlot();
  refreshExport();
}

/// The document as the page asks for it: columnar tracks with events, whatever its `output` says.
function forPage(doc, extra) {
  const copy = JSON.parse(JSON.stringify(doc));
  if (copy && typeof copy === "object" && !Array.isArray(copy)) {
    const output = (copy.output && typeof copy.output === "object" && !Array.isArray(copy.output)) ? copy.output : {};
    delete output.format; delete output.simplify; delete output.css; delete output.lottie; delete output.svg;
    copy.output = { ...output, layout: "tracks", events: true, final: false, ...(extra || {}) };
  }
  return copy;
}

function markStale(message) {
  document.body.classList.add("stale");
  setStatus(message, "bad");
  if (!state.timeline) { renderPlot(); renderStage(); }
}

// ---------------------------------------------------------------------------------------
// The model: which tracks move which element on the stage.

const COLOUR_CHANNELS = ["red", "green", "blue", "alpha"];

function targetValue(target, path) {
  let value = target;
  for (const segment of path.split(".")) {
    if (value === null || typeof value !== "object") return undefined;
    value = value[segment];
  }
  return value;
}

function parentPath(path) {
  const at = path.lastIndexOf(".");
  return at < 0 ? "" : path.slice(0, at);
}

function lastSegment(path) { return path.slice(path.lastIndexOf(".") + 1); }

function collectPathNodes(node, found) {
  if (!node || typeof node !== "object") return found;
  if (node.type === "path" || node.type === "pathPhysics") found.push({ output: node.output || "position", rotation: node.rotation });
  for (const key of ["children", "steps"]) if (Array.isArray(node[key])) node[key].forEach((child) => collectPathNodes(child, found));
  return found;
}

function buildModel(doc, timeline) {
  const target = (doc && typeof doc.target === "object" && doc.target) || {};
  const pathNodes = collectPathNodes(doc && doc.motion, []);
  const rotationOf = new Map(pathNodes.filter((p) => p.rotation).map((p) => [p.rotation, p.output]));
  const entities = new Map();
  const entity = (name) => {
    if (!entities.has(name)) entities.set(name, { name, tracks: {}, colour: null, follower: pathNodes.some((p) => p.output === name) });
    return entities.get(name);
  };
  timeline.tracks.forEach((track, index) => {
    const path = track.path, last = lastSegment(path), parent = parentPath(path);
    const parentValue = parent ? targetValue(target, parent) : undefined;
    if (COLOUR_CHANNELS.includes(last) && (typeof parentValue === "string" || parentValue === undefined && parent)) {
      const owner = parentPath(parent) || parent;
      const e = entity(owner);
      e.colour = e.colour || { path: parent, channels: {} };
      e.colour.channels[last] = index;
    } else if (rotationOf.has(path)) {
      entity(rotationOf.get(path)).tracks.rotation = index;
    } else if (parent && ["x", "y", "width", "height", "opacity", "scale", "rotation"].includes(last)) {
      entity(parent).tracks[last] = index;
    } else {
      entity(path).tracks.value = index;
    }
  });
  const ranges = timeline.tracks.map((track) => {
    let min = Infinity, max = -Infinity;
    for (const v of track.values) { if (v < min) min = v; if (v > max) max = v; }
    if (!isFinite(min)) { min = 0; max = 1; }
    return { min, max };
  });
  const list = [...entities.values()];
  for (const e of list) {
    const t = e.tracks;
    const base = targetValue(target, e.name);
    e.size = base && typeof base === "object" && typeof base.width === "number" && typeof base.height === "number"
      ? { width: base.width, height: base.height } : null;
    // an object placed at a constant x and y in the target stands where it is
    e.fixed = base && typeof base === "object" && typeof base.x === "number" && typeof base.y === "number"
      ? { x: base.x, y: base.y } : null;
    e.kind = (t.x !== undefined || t.y !== undefined) && (t.x !== undefined || e.fixed) && (t.y !== undefined || e.fixed)
      || (e.fixed && (e.colour || t.opacity !== undefined || t.width !== undefined || t.height !== undefined || t.rotation !== undefined)) ? "point" : "lane";
    e.main = t.value ?? t.x ?? t.y ?? t.width ?? t.height ?? t.opacity ?? t.scale ?? t.rotation;
  }
  return { entities: list, ranges };
}

/// A point's x or y: from its track, or where the target places it.
function coord(e, axis, values) {
  return e.tracks[axis] !== undefined ? values[e.tracks[axis]] : e.fixed[axis];
}

function coordSeries(e, axis, timeline) {
  return e.tracks[axis] !== undefined ? timeline.tracks[e.tracks[axis]].values : timeline.times.map(() => e.fixed[axis]);
}

function coordRange(e, axis, ranges) {
  return e.tracks[axis] !== undefined ? ranges[e.tracks[axis]] : { min: e.fixed[axis], max: e.fixed[axis] };
}

/// Every track's value at time t, interpolated linearly between the frames around it (the
/// exact sample on a frame time).
function valuesAt(timeline, t) {
  const times = timeline.times;
  let lo = 0, hi = times.length - 1;
  if (t <= times[0]) return timeline.tracks.map((tr) => tr.values[0]);
  if (t >= times[hi]) return timeline.tracks.map((tr) => tr.values[hi]);
  while (hi - lo > 1) { const mid = (lo + hi) >> 1; if (times[mid] <= t) lo = mid; else hi = mid; }
  // within a nanosecond of a frame (a slider's value may not round-trip exactly): that frame
  if (times[hi] - t < 1e-9) lo = hi;
  const span = times[hi] - times[lo];
  const u = span > 0 && t - times[lo] >= 1e-9 ? (t - times[lo]) / span : 0;
  return timeline.tracks.map((tr) => {
    const a = tr.values[lo], b = tr.values[hi];
    return u === 0 ? a : a + (b - a) * u;
  });
}

// ---------------------------------------------------------------------------------------
// The stage

const stage = $("stage");
let stageLayout = null;

function renderStage() {
  stage.textContent = "";
  const model = state.model, timeline = state.timeline;
  const width = stage.clientWidth || 600;
  if (!model || !timeline) {
    stage.setAttribute("viewBox", `0 0 ${width} 160`);
    const text = el("text", { x: width / 2, y: 80, class: "empty", "text-anchor": "middle" }, stage);
    text.textContent = "Pick an example or write a document: its elements play here.";
    stageLayout = null;
    return;
  }
  const shown = model.entities.slice(0, MAX_STAGE_ELEMENTS);
  const points = shown.filter((e) => e.kind === "point");
  const lanes = shown.filter((e) => e.kind === "lane");
  const laneHeight = 30, laneLeft = Math.min(150, width * 0.3), pad = 18;
  let y = 8;
  stageLayout = { width, points: [], lanes: [] };
  if (points.length) {
    // one shared 2-D space for every element with x and y, fitted to all their positions
    let minX = Infinity, maxX = -Infinity, minY = Infinity, maxY = -Infinity;
    for (const e of points) {
      const xs = coordSeries(e, "x", timeline), ys = coordSeries(e, "y", timeline);
      const w = e.tracks.width !== undefined ? model.ranges[e.tracks.width].max : e.size ? e.size.width : 0;
      const h = e.tracks.height !== undefined ? model.ranges[e.tracks.height].max : e.size ? e.size.height : 0;
      for (const v of xs) { minX = Math.min(minX, v); maxX = Math.max(maxX, v + w); }
      for (const v of ys) { minY = Math.min(minY, v); maxY = Math.max(maxY, v + h); }
    }
    const spanX = Math.max(maxX - minX, 1), spanY = Math.max(maxY - minY, 1);
    const boxHeight = Math.min(220, Math.max(120, width * 0.32));
    const scale = Math.min((width - 2 * pad - 40) / spanX, (boxHeight - 2 * pad) / spanY);
    const offsetX = (width - spanX * scale) / 2 - minX * scale;
    const offsetY = y + (boxHeight - spanY * scale) / 2 - minY * scale;
    el("rect", { x: 4, y, width: width - 8, height: boxHeight, rx: 10, class: "area" }, stage);
    const map = { scale, x: (v) => offsetX + v * scale, y: (v) => offsetY + v * scale,
                  invX: (px) => (px - offsetX) / scale, invY: (py) => (py - offsetY) / scale };
    points.forEach((e, n) => {
      const colour = PALETTE[n % PALETTE.length];
      if (e.tracks.x !== undefined || e.tracks.y !== undefined) {
        const xs = coordSeries(e, "x", timeline), ys = coordSeries(e, "y", timeline);
        const d = xs.map((x, k) => `${k ? "L" : "M"}${map.x(x).toFixed(1)} ${map.y(ys[k]).toFixed(1)}`).join("");
        el("path", { d, class: e.follower ? "trail follower-path" : "trail", stroke: colour }, stage);
      }
      const g = el("g", { class: "element point", "data-entity": e.name, "data-tracks": entityTracks(e) }, stage);
      if (e.tracks.x !== undefined) g.setAttribute("data-x-path", timeline.tracks[e.tracks.x].path);
      if (e.tracks.y !== undefined) g.setAttribute("data-y-path", timeline.tracks[e.tracks.y].path);
      let shape;
      if (e.tracks.width !== undefined || e.tracks.height !== undefined || e.size) {
        shape = el("rect", { rx: 6, class: "body" }, g);
      } else if (e.tracks.rotation !== undefined) {
        shape = el("path", { d: "M14 0 L-9 -9 L-4 0 L-9 9 Z", class: "body" }, g);
      } else {
        shape = el("circle", { r: 9, class: "body" }, g);
      }
      shape.setAttribute("fill", colour);
      if (points.length <= 6) {
        const label = el("text", { class: "label", x: 14, y: -12 }, g);
        label.textContent = e.name;
      }
      const title = el("title", {}, g);
      title.textContent = e.name;
      stageLayout.points.push({ entity: e, node: g, shape, colour, map });
    });
    stageLayout.area = { top: y, bottom: y + boxHeight, map };
    y += boxHeight + 10;
  }
  lanes.forEach((e, n) => {
    const main = e.main;
    const top = y + n * laneHeight;
    const g = el("g", { class: "lane", "data-entity": e.name }, stage);
    el("rect", { x: 4, y: top, width: width - 8, height: laneHeight - 4, rx: 6, class: "lane-bg" }, g);
    const label = el("text", { x: 12, y: top + laneHeight / 2 + 2, class: "lane-label" }, g);
    label.textContent = e.name;
    const x0 = laneLeft, x1 = width - 96;
    el("line", { x1: x0, x2: x1, y1: top + laneHeight / 2 - 2, y2: top + laneHeight / 2 - 2, class: "rail" }, g);
    const range = main !== undefined ? model.ranges[main] : { min: 0, max: 1 };
    const dot = el(main !== undefined ? "circle" : "rect", main !== undefined
      ? { r: 8, cy: top + laneHeight / 2 - 2, class: "body element" }
      : { x: x0, y: top + 4, width: 60, height: laneHeight - 12, rx: 5, class: "body element swatch" }, g);
    dot.setAttribute("data-entity", e.name);
    dot.setAttribute("data-tracks", entityTracks(e));
    if (main !== undefined) dot.setAttribute("data-path", state.timeline.tracks[main].path);
    dot.setAttribute("fill", PALETTE[(n + points.length) % PALETTE.length]);
    const readout = el("text", { x: width - 14, y: top + laneHeight / 2 + 2, class: "readout", "text-anchor": "end" }, g);
    stageLayout.lanes.push({ entity: e, node: g, dot, readout, x0, x1, range, top, bottom: top + laneHeight });
  });
  y += lanes.length * laneHeight;
  stage.setAttribute("viewBox", `0 0 ${width} ${Math.max(y + 4, 60)}`);
  stage.style.height = `${Math.max(y + 4, 60)}px`;
  const count = model.entities.length;
  $("stage-hint").textContent = `${count > shown.length ? `the first ${shown.length} of ` : ""}${count} element${count === 1 ? "" : "s"}`;
  drawFrame();
}

/// The paths of every track an element reads, space-separated (for people and tests).
function entityTracks(e) {
  const indices = [...Object.values(e.tracks), ...(e.colour ? Object.values(e.colour.channels) : [])];
  return indices.map((i) => state.timeline.tracks[i].path).join(" ");
}

function laneX(lane, value) {
  const { min, max } = lane.range;
  const u = max > min ? (value - min) / (max - min) : 0.5;
  return lane.x0 + u * (lane.x1 - lane.x0);
}

function colourOf(entity, values) {
  if (!entity.colour) return null;
  const c = entity.colour.channels;
  const base = targetValue((state.doc && state.doc.target) || {}, entity.colour.path);
  const start = parseColour(typeof base === "string" ? base : "#000");
  const pick = (name, fallback) => c[name] !== undefined ? values[c[name]] : fallback;
  const r = pick("red", start[0]), g = pick("green", start[1]), b = pick("blue", start[2]), a = pick("alpha", start[3]);
  const to255 = (v) => Math.round(Math.min(1, Math.max(0, v)) * 255);
  return `rgba(${to255(r)}, ${to255(g)}, ${to255(b)}, ${Math.min(1, Math.max(0, a)).toFixed(3)})`;
}

function hexColour(rgba) {
  const [r, g, b, a] = rgba.match(/[\d.]+/g).map(Number);
  const hex = (v) => v.toString(16).padStart(2, "0");
  return "#" + hex(r) + hex(g) + hex(b) + (a < 1 ? hex(Math.round(a * 255)) : "");
}

function parseColour(text) {
  const probe = document.createElement("canvas").getContext("2d");
  probe.fillStyle = "#000";
  probe.fillStyle = text;
  const value = probe.fillStyle;
  if (value.startsWith("#")) {
    return [1, 3, 5].map((i) => parseInt(value.slice(i, i + 2), 16) / 255).concat(1);
  }
  const parts = value.match(/[\d.]+/g) || ["0", "0", "0", "1"];
  return [parts[0] / 255, parts[1] / 255, parts[2] / 255, parts[3] === undefined ? 1 : Number(parts[3])];
}

/// Puts every element where the values say. `values` are the track values (by index) of the
/// timeline, or those of a live session's latest frame.
function drawFrame(values) {
  if (!stageLayout || !state.timeline) return;
  values = values || valuesAt(state.timeline, state.time);
  for (const p of stageLayout.points) {
    const t = p.entity.tracks;
    const x = coord(p.entity, "x", values), y = coord(p.entity, "y", values);
    p.node.setAttribute("transform", `translate(${p.map.x(x).toFixed(2)} ${p.map.y(y).toFixed(2)})`);
    if (t.rotation !== undefined) {
      p.shape.setAttribute("transform", `rotate(${values[t.rotation].toFixed(2)})`);
      p.node.setAttribute("data-rotation", String(values[t.rotation]));
    }
    p.node.setAttribute("data-x", String(x));
    p.node.setAttribute("data-y", String(y));
    if (p.shape.tagName === "rect") {
      const size = p.entity.size || { width: 40, height: 40 };
      const w = t.width !== undefined ? values[t.width] : size.width, h = t.height !== undefined ? values[t.height] : size.height;
      p.shape.setAttribute("width", Math.max(2, w * p.map.scale));
      p.shape.setAttribute("height", Math.max(2, h * p.map.scale));
    }
    const colour = colourOf(p.entity, values);
    if (colour) p.shape.setAttribute("fill", colour);
    p.node.setAttribute("opacity", t.opacity !== undefined ? Math.min(1, Math.max(0.05, values[t.opacity])) : 1);
  }
  for (const lane of stageLayout.lanes) {
    const e = lane.entity;
    if (e.main !== undefined) {
      const v = values[e.main];
      lane.dot.setAttribute("cx", laneX(lane, v).toFixed(2));
      lane.dot.setAttribute("data-value", String(v));
      lane.readout.textContent = fmt(v, 2);
    }
    const colour = colourOf(e, values);
    if (colour) { lane.dot.setAttribute("fill", colour); if (e.main === undefined) lane.readout.textContent = hexColour(colour); }
    if (e.tracks.opacity !== undefined && e.main !== e.tracks.opacity) lane.dot.setAttribute("opacity", Math.min(1, Math.max(0.05, values[e.tracks.opacity])));
  }
  if (!state.live) {
    $("clock").textContent = `${state.time.toFixed(3)} s`;
    $("scrub").value = String(state.time);
    movePlayhead(state.time);
  }
}

// ---------------------------------------------------------------------------------------
// The plot: one row per track, each with its own value axis; seconds along the bottom; the
// events as marks; a playhead you can drag.

const plot = $("plot");
let plotLayout = null;

function niceStep(span, count) {
  const raw = span / Math.max(1, count);
  const power = Math.pow(10, Math.floor(Math.log10(raw)));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * power >= raw) return m * power;
  return 10 * power;
}

function renderPlot() {
  plot.textContent = "";
  const timeline = state.timeline;
  const width = plot.clientWidth || 600;
  if (!timeline) {
    plot.setAttribute("viewBox", `0 0 ${width} 120`);
    plot.style.height = "120px";
    const text = el("text", { x: width / 2, y: 60, class: "empty", "text-anchor": "middle" }, plot);
    text.textContent = "No tracks yet.";
    plotLayout = null;
    return;
  }
  const tracks = timeline.tracks.slice(0, MAX_PLOTTED_TRACKS);
  // wide: names in a column left of the value axes; narrow: names inside their rows
  const longest = Math.max(...tracks.map((t) => Math.min(t.path.length, 24)), 4);
  const inside = width < 640;
  const left = inside ? 58 : Math.min(width * 0.4, Math.max(110, longest * 7.3 + 64)), right = 14, top = 26, axis = 26;
  const available = Math.max(160, ($("plot-wrap").clientHeight || 300) - top - axis - 4);
  const rowHeight = Math.max(40, Math.min(180, available / Math.max(1, tracks.length)));
  const height = top + rowHeight * tracks.length + axis;
  plot.setAttribute("viewBox", `0 0 ${width} ${height}`);
  plot.style.height = `${height}px`;
  const t0 = timeline.window.start, t1 = timeline.window.end;
  const span = Math.max(t1 - t0, 1e-9);
  const x = (t) => left + (t - t0) / span * (width - left - right);
  plotLayout = { x, left, right, width, top, height, axis, t0, t1 };

  // time grid and axis
  const step = niceStep(span, Math.max(2, Math.floor((width - left) / 80)));
  for (let t = Math.ceil(t0 / step) * step; t <= t1 + 1e-9; t += step) {
    el("line", { x1: x(t), x2: x(t), y1: top, y2: height - axis, class: "grid" }, plot);
    const label = el("text", { x: x(t), y: height - axis + 16, class: "tick", "text-anchor": "middle" }, plot);
    label.textContent = `${fmt(t, 3)} s`;
  }
  // events, labelled where there is room
  let lastLabel = -Infinity;
  const events = timeline.events || [];
  for (const event of events.slice(0, MAX_EVENT_MARKS)) {
    const ex = x(event.time);
    const text = event.type + (event.type === "stepped" ? " " + event.step : "");
    const mark = el("line", { x1: ex, x2: ex, y1: top - 6, y2: height - axis, class: "event event-" + event.type }, plot);
    mark.setAttribute("data-event", event.type);
    const title = el("title", {}, mark);
    title.textContent = `${event.type} · ${event.motion} · ${fmt(event.time, 4)} s`;
    const textWidth = text.length * 5.6;
    const nearEnd = ex + 3 + textWidth > width - 2;
    const from = nearEnd ? ex - 3 - textWidth : ex + 3;
    if (from > lastLabel + 6) {
      const label = el("text", { x: nearEnd ? ex - 3 : ex + 3, y: top - 10, class: "event-label", "text-anchor": nearEnd ? "end" : "start" }, plot);
      label.textContent = text;
      lastLabel = from + textWidth;
    }
  }
  // one row per track
  tracks.forEach((track, index) => {
    const y0 = top + index * rowHeight, y1 = y0 + rowHeight - 8;
    const { min, max } = state.model.ranges[index];
    const flat = !(max > min);
    const y = (v) => flat ? (y0 + y1) / 2 : y1 - (v - min) / (max - min) * (y1 - y0);
    el("rect", { x: left, y: y0, width: width - left - right, height: rowHeight - 8, class: "row" + (index % 2 ? " odd" : "") }, plot);
    const name = el("text", inside ? { x: left + 6, y: y0 + 13, class: "track-name inside" } : { x: 8, y: (y0 + y1) / 2 + 4, class: "track-name" }, plot);
    name.textContent = track.path.length > 24 ? "…" + track.path.slice(-23) : track.path;
    const title = el("title", {}, name);
    title.textContent = track.path;
    const hi = el("text", { x: left - 6, y: y0 + 10, class: "axis-value", "text-anchor": "end" }, plot);
    hi.textContent = fmt(max, 3);
    const lo = el("text", { x: left - 6, y: y1, class: "axis-value", "text-anchor": "end" }, plot);
    lo.textContent = fmt(min, 3);
    const d = track.values.map((v, k) => `${k ? "L" : "M"}${x(timeline.times[k]).toFixed(2)} ${y(v).toFixed(2)}`).join("");
    const channel = lastSegment(track.path);
    const colour = CHANNEL_COLOURS[channel] && parentPath(track.path) ? CHANNEL_COLOURS[channel] : PALETTE[index % PALETTE.length];
    el("path", { d, class: "track", stroke: colour, "data-path": track.path }, plot);
  });
  el("line", { x1: left, x2: width - right, y1: height - axis, y2: height - axis, class: "axis" }, plot);
  const head = el("g", { id: "playhead", class: "playhead" }, plot);
  el("line", { x1: 0, x2: 0, y1: top - 4, y2: height - axis, class: "playhead-line" }, head);
  el("path", { d: "M-6 " + (top - 12) + " L6 " + (top - 12) + " L0 " + (top - 4) + " Z", class: "playhead-knob" }, head);
  const all = timeline.tracks.length;
  $("plot-hint").textContent = `${all > tracks.length ? `the first ${tracks.length} of ` : ""}${all} track${all === 1 ? "" : "s"} · ${events.length} event${events.length === 1 ? "" : "s"} · each row scaled to its own range`;
  movePlayhead(state.time);
}

function movePlayhead(t) {
  const head = document.getElementById("playhead");
  if (head && plotLayout) head.setAttribute("transform", `translate(${plotLayout.x(Math.min(Math.max(t, plotLayout.t0), plotLayout.t1)).toFixed(2)} 0)`);
}

function plotTimeAt(event) {
  const box = plot.getBoundingClientRect();
  const px = (event.clientX - box.left) * (plotLayout.width / box.width);
  const u = (px - plotLayout.left) / (plotLayout.width - plotLayout.left - plotLayout.right);
  return plotLayout.t0 + Math.min(1, Math.max(0, u)) * (plotLayout.t1 - plotLayout.t0);
}

plot.addEventListener("pointerdown", (event) => {
  if (!plotLayout || state.live) return;
  plot.setPointerCapture(event.pointerId);
  pause();
  seekTo(plotTimeAt(event));
  const move = (e) => seekTo(plotTimeAt(e));
  const up = () => { plot.removeEventListener("pointermove", move); plot.removeEventListener("pointerup", up); };
  plot.addEventListener("pointermove", move);
  plot.addEventListener("pointerup", up);
});

// ---------------------------------------------------------------------------------------
// Transport: play, pause, scrub, speed, loop

function seekTo(t) {
  state.time = t;
  drawFrame();
}

function play() {
  if (!state.timeline || state.live) return;
  if (state.time >= state.timeline.window.end) state.time = state.timeline.window.start;
  state.playing = true;
  state.lastTick = performance.now();
  $("play").textContent = "Pause";
  $("play").setAttribute("aria-label", "Pause");
  requestAnimationFrame(tick);
}

function pause() {
  state.playing = false;
  $("play").textContent = "Play";
  $("play").setAttribute("aria-label", "Play");
}

function tick(now) {
  if (!state.playing || !state.timeline) return;
  const dt = (now - state.lastTick) / 1000 * Number($("speed").value);
  state.lastTick = now;
  const { start, end } = state.timeline.window;
  let t = state.time + dt;
  if (t >= end) {
    if ($("loop").checked) t = start + (end > start ? (t - start) % (end - start) : 0);
    else { t = end; pause(); }
  }
  state.time = t;
  drawFrame();
  if (state.playing) requestAnimationFrame(tick);
}

$("play").addEventListener("click", () => (state.playing ? pause() : play()));
$("scrub").addEventListener("input", () => { pause(); seekTo(Number($("scrub").value)); });
document.addEventListener("keydown", (event) => {
  if (event.target === editor || event.target.tagName === "INPUT" || event.target.tagName === "SELECT") return;
  if (event.key === " ") { event.preventDefault(); state.playing ? pause() : play(); }
});

// ---------------------------------------------------------------------------------------
// Examples

function loadExample(id) {
  const example = state.examples.find((e) => e.id === id) || state.examples[0];
  $("examples").value = example.id;
  pause();
  stopLive();
  state.time = example.doc.window ? example.doc.window.start || 0 : 0;
  state.timeline = null;
  state.model = null;
  setEditorText(prettyJSON(example.doc));
  history.replaceState(null, "", "#" + example.id);
  return runNow().then(() => { if (state.timeline) play(); });
}

$("examples").addEventListener("change", () => loadExample($("examples").value));
