// MotionServer Playground, part two: the tools under the workspace (export, live sessions,
// the spring designer) and the start-up that finds out what this server supports. Loaded
// after app.js, whose helpers and state it uses.
"use strict";

// ---------------------------------------------------------------------------------------
// Export

function renderFormatTabs() {
  const box = $("formats");
  box.textContent = "";
  const labels = { document: "Document", json: "JSON", curl: "curl" };
  for (const id of ["document", "curl", "json", ...state.formats.filter((f) => !["document", "json"].includes(f))]) {
    const label = labels[id] || (EXPORT_FORMATS.find((f) => f.id === id) || {}).label || id;
    const button = html("button", { type: "button", className: "format", text: label, dataset: { format: id } }, box);
    button.setAttribute("role", "tab");
    button.setAttribute("aria-selected", String(id === state.exportFormat));
    button.addEventListener("click", () => { state.exportFormat = id; renderFormatTabs(); refreshExport(); });
  }
}

async function exportText(format) {
  if (state.exportCache.has(format)) return state.exportCache.get(format);
  let result;
  if (format === "document") {
    result = { text: editor.value, hint: "the document, as in the editor" };
  } else if (format === "curl") {
    const body = JSON.stringify(state.doc).replace(/'/g, "'\\''");
    result = { text: `curl -s ${location.origin}/v1/timelines -H 'Content-Type: application/json' -d '${body}'`, hint: "the same request from a shell" };
  } else {
    const doc = JSON.parse(JSON.stringify(state.doc));
    if (format !== "json") { doc.output = { ...(doc.output || {}), format }; }
    const generated = format === "lottie" && !doc.output.lottie && state.model;
    if (generated) doc.output.lottie = lottieFromStage();
    const answer = await post("/v1/timelines", doc);
    if (!answer.ok) {
      const errors = (answer.json && answer.json.errors) || [];
      result = { error: true, text: errors.length ? errors.map((e) => `${e.pointer || e.parameter || ""}  ${e.message}`).join("\n")
                                                   : (answer.json && answer.json.detail) || `HTTP ${answer.status}`,
                 hint: `${answer.status}: this document cannot be exported as ${format}` };
    } else {
      const text = answer.type.includes("json") ? JSON.stringify(JSON.parse(answer.text), null, 2) : answer.text;
      result = { text, hint: `${answer.type.split(";")[0]} · ${answer.text.length.toLocaleString()} bytes`
                          + (generated ? " · layers made from the stage's elements (give output.lottie to choose your own)" : ""),
                 svg: format === "svg" ? answer.text : null };
    }
  }
  state.exportCache.set(format, result);
  return result;
}

/// `output.lottie` for a document that has none: one layer per stage element, in the
/// document's own units — a point at its x and y, a lane's value along x on its own row —
/// filled with its colour, turned by its rotation, faded by its opacity.
function lottieFromStage() {
  const { entities, ranges } = state.model;
  const tracks = state.timeline.tracks;
  const pad = 24, row = 40;
  const ref = (index) => "{" + tracks[index].path + "}";
  const layers = [];
  let minX = Infinity, maxX = -Infinity, minY = Infinity, maxY = -Infinity;
  const points = entities.filter((e) => e.kind === "point");
  for (const e of points) {
    const rx = coordRange(e, "x", ranges), ry = coordRange(e, "y", ranges);
    minX = Math.min(minX, rx.min); maxX = Math.max(maxX, rx.max + (e.size ? e.size.width : 0));
    minY = Math.min(minY, ry.min); maxY = Math.max(maxY, ry.max + (e.size ? e.size.height : 0));
  }
  const pointsHeight = points.length ? maxY - minY + 2 * pad : 0;
  let width = points.length ? maxX - minX + 2 * pad : 0;
  entities.forEach((e, n) => {
    const layer = { name: e.name, fill: PALETTE[n % PALETTE.length] };
    if (e.colour) layer.fill = "{" + e.colour.path + "}";
    if (e.tracks.opacity !== undefined) layer.opacity = ref(e.tracks.opacity);
    if (e.tracks.rotation !== undefined) layer.rotation = ref(e.tracks.rotation);
    if (e.kind === "point") {
      layer.shape = e.size ? "rect" : "ellipse";
      layer.size = e.size ? [e.size.width, e.size.height] : [18, 18];
      layer.position = ["x", "y"].map((axis) => e.tracks[axis] !== undefined ? ref(e.tracks[axis]) : e.fixed[axis]);
      layer.anchor = [minX - pad, minY - pad];
    } else {
      const lane = entities.filter((other) => other.kind === "lane").indexOf(e);
      const range = e.main !== undefined ? ranges[e.main] : { min: 0, max: 0 };
      layer.shape = e.main !== undefined ? "ellipse" : "rect";
      layer.size = e.main !== undefined ? [18, 18] : [48, 24];
      layer.position = [e.main !== undefined ? ref(e.main) : range.min, pointsHeight + pad + lane * row];
      layer.anchor = [range.min - pad, 0];
      width = Math.max(width, range.max - range.min + 2 * pad);
    }
    layers.push(layer);
  });
  const lanes = entities.filter((e) => e.kind === "lane").length;
  const height = pointsHeight + (lanes ? lanes * row + pad : 0);
  return { width: Math.max(64, Math.ceil(width)), height: Math.max(64, Math.ceil(height)), layers: layers.slice(0, 256) };
}

let exportSerial = 0;
async function refreshExport() {
  if ($("tab-export").hidden || !state.doc) return;
  const serial = ++exportSerial;
  if (!state.exportCache.has(state.exportFormat)) {
    $("export-hint").textContent = "Computing…";
    $("export-text").classList.add("pending");
  }
  const result = await exportText(state.exportFormat);
  if (serial !== exportSerial) return;
  const pre = $("export-text");
  pre.textContent = result.text.length > 200000 ? result.text.slice(0, 200000) + "\n… (Copy takes all of it)" : result.text;
  pre.classList.toggle("error", !!result.error);
  pre.classList.remove("pending");
  $("export-hint").textContent = result.hint;
  const image = $("export-image");
  if (result.svg) {
    if (image.dataset.url) URL.revokeObjectURL(image.dataset.url);
    image.dataset.url = URL.createObjectURL(new Blob([result.svg], { type: "image/svg+xml" }));
    image.src = image.dataset.url;
    image.hidden = false;
  } else {
    image.hidden = true;
  }
}

$("copy-export").addEventListener("click", async (event) => {
  const result = await exportText(state.exportFormat);
  copyText(result.text, event.currentTarget);
});

// ---------------------------------------------------------------------------------------
// Tabs

for (const tab of document.querySelectorAll(".tab")) {
  tab.addEventListener("click", () => {
    for (const other of document.querySelectorAll(".tab")) {
      other.setAttribute("aria-selected", String(other === tab));
      $("tab-" + other.dataset.tab).hidden = other !== tab;
    }
    if (tab.dataset.tab === "export") refreshExport();
    if (tab.dataset.tab === "springs") springUpdate();
  });
}

// ---------------------------------------------------------------------------------------
// Live sessions: start, watch, steer

function logLive(text, kind) {
  const log = $("live-log");
  if (log.firstChild && log.firstChild.classList.contains("dim")) log.firstChild.remove();
  const item = html("li", { text, className: kind || "" }, log);
  log.scrollTop = log.scrollHeight;
  while (log.childElementCount > 200) log.firstChild.remove();
  return item;
}

function showSessionState(s) {
  if (!state.live || !s) return;
  state.live.state = s.state;
  $("live-state").textContent = `Session ${s.id} · ${s.state} · t = ${fmt(s.time, 3)} s${s.duration != null ? " of " + fmt(s.duration, 3) + " s" : ""}`;
  $("live-pause").textContent = s.state === "paused" ? "Resume" : "Pause";
  const ended = s.state === "stopped" || s.state === "completed";
  $("live-pause").disabled = ended;
  $("live-reverse").disabled = ended;
  $("live-seek").disabled = ended;
}

async function startLive() {
  if (!state.doc || !state.timeline) return;
  stopLive();
  pause();
  const speed = Number($("speed").value);
  const answer = await post(`/v1/sessions?speed=${speed}`, forPage(state.doc));
  if (answer.status !== 201) {
    logLive(`${answer.status}: ${(answer.json && (answer.json.detail || answer.json.title)) || answer.text}`, "bad");
    return;
  }
  const s = answer.json;
  const controller = new AbortController();
  state.live = { id: s.id, controller, state: s.state, paths: state.timeline.tracks.map((t) => t.path), values: null };
  document.body.classList.add("live");
  $("mode").textContent = "live";
  $("live-bar").hidden = false;
  $("live-start").textContent = "Restart live";
  $("live-stop").disabled = false;
  const seek = $("live-seek");
  seek.min = state.timeline.window.start;
  seek.max = state.timeline.window.end;
  logLive(`started ${s.id}`);
  showSessionState(s);
  watchLive(state.live);
}

async function watchLive(live) {
  let response;
  try {
    response = await fetch(`/v1/sessions/${live.id}/frames`, { signal: live.controller.signal });
  } catch (_) { return; }
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let newline;
      while ((newline = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        if (line.trim()) onLiveLine(live, JSON.parse(line));
      }
    }
  } catch (_) { /* aborted */ }
}

function onLiveLine(live, message) {
  if (state.live !== live) return;
  if (message.values) {
    const values = live.paths.map((path, index) => (path in message.values ? message.values[path] : (live.values ? live.values[index] : 0)));
    live.values = values;
    live.time = message.time;
    if (live.state) $("live-state").textContent = `Session ${live.id} · ${live.state} · t = ${fmt(message.time, 3)} s${state.timeline.duration != null ? " of " + fmt(state.timeline.duration, 3) + " s" : ""}`;
    drawFrame(values);
    $("clock").textContent = `${message.time.toFixed(3)} s`;
    $("scrub").value = String(message.time);
    if (!live.seeking) $("live-seek").value = String(message.time);
    movePlayhead(message.time);
  } else if (message.end) {
    logLive(`end: ${message.state} at ${fmt(message.time, 3)} s`);
    showSessionState({ id: live.id, state: message.state, time: message.time });
  } else if (message.event) {
    const extra = message.path ? ` ${message.path} → ${JSON.stringify(message.to)}` : message.motion ? ` ${message.motion}` : "";
    logLive(`${fmt(message.time, 3)} s  ${message.event}${extra}`, message.session ? "session" : "");
  }
}

async function liveCommand(body) {
  const live = state.live;
  if (!live) return;
  const answer = await post(`/v1/sessions/${live.id}/commands`, body);
  if (answer.ok) showSessionState(answer.json);
  else logLive(`${answer.status}: ${(answer.json && answer.json.detail) || answer.text}`, "bad");
}

function stopLive() {
  const live = state.live;
  if (!live) return;
  state.live = null;
  live.controller.abort();
  fetch(`/v1/sessions/${live.id}`, { method: "DELETE" }).catch(() => {});
  document.body.classList.remove("live");
  $("mode").textContent = "timeline";
  $("live-start").textContent = "Go live";
  $("live-bar").hidden = true;
  for (const id of ["live-pause", "live-reverse", "live-seek", "live-stop"]) $(id).disabled = true;
  logLive(`ended ${live.id}`);
  const marker = document.getElementById("retarget-marker");
  if (marker) marker.remove();
  drawFrame();
}

$("live-start").addEventListener("click", startLive);
$("live-stop").addEventListener("click", stopLive);
$("live-pause").addEventListener("click", () => liveCommand({ command: state.live && state.live.state === "paused" ? "resume" : "pause" }));
$("live-reverse").addEventListener("click", () => liveCommand({ command: "reverse" }));
$("live-seek").addEventListener("input", () => { if (state.live) state.live.seeking = true; });
$("live-seek").addEventListener("change", () => {
  if (state.live) state.live.seeking = false;
  liveCommand({ command: "seek", time: Number($("live-seek").value) });
});

/// Retarget by dragging on the stage: on a lane, toward the value under the pointer; in the
/// 2-D area, toward the point (both coordinates of the nearest element).
function stagePoint(event) {
  const box = stage.getBoundingClientRect();
  const viewBox = stage.viewBox.baseVal;
  return { x: (event.clientX - box.left) * viewBox.width / box.width, y: (event.clientY - box.top) * viewBox.height / box.height };
}

function retargetAt(point) {
  if (!state.live || !stageLayout) return null;
  const lane = stageLayout.lanes.find((l) => point.y >= l.top && point.y < l.bottom && l.entity.main !== undefined);
  if (lane) {
    const u = Math.min(1, Math.max(0, (point.x - lane.x0) / (lane.x1 - lane.x0)));
    const { min, max } = lane.range;
    const span = max > min ? max - min : 1;
    return { marker: [point.x, (lane.top + lane.bottom) / 2 - 2],
             requests: [{ path: state.timeline.tracks[lane.entity.main].path, to: min + u * span }] };
  }
  const area = stageLayout.area;
  if (area && point.y >= area.top && point.y <= area.bottom && stageLayout.points.length) {
    const values = state.live.values || valuesAt(state.timeline, state.time);
    let best = stageLayout.points[0], bestDistance = Infinity;
    for (const p of stageLayout.points) {
      const dx = p.map.x(coord(p.entity, "x", values)) - point.x, dy = p.map.y(coord(p.entity, "y", values)) - point.y;
      if (dx * dx + dy * dy < bestDistance) { best = p; bestDistance = dx * dx + dy * dy; }
    }
    const t = best.entity.tracks, tracks = state.timeline.tracks;
    const requests = [];
    if (t.x !== undefined) requests.push({ path: tracks[t.x].path, to: area.map.invX(point.x) });
    if (t.y !== undefined) requests.push({ path: tracks[t.y].path, to: area.map.invY(point.y) });
    return { marker: [point.x, point.y], requests };
  }
  return null;
}

function showRetargetMarker(at) {
  let marker = document.getElementById("retarget-marker");
  if (!marker) {
    marker = el("g", { id: "retarget-marker", class: "retarget" }, stage);
    el("circle", { r: 11 }, marker);
    el("path", { d: "M-16 0 H-6 M6 0 H16 M0 -16 V-6 M0 6 V16" }, marker);
  }
  marker.setAttribute("transform", `translate(${at[0].toFixed(1)} ${at[1].toFixed(1)})`);
}

stage.addEventListener("pointerdown", (event) => {
  if (!state.live) return;
  event.preventDefault();
  stage.setPointerCapture(event.pointerId);
  const track = (e) => { const r = retargetAt(stagePoint(e)); if (r) showRetargetMarker(r.marker); return r; };
  track(event);
  const move = (e) => track(e);
  const up = async (e) => {
    stage.removeEventListener("pointermove", move);
    stage.removeEventListener("pointerup", up);
    const r = track(e);
    if (!r || !state.live) return;
    for (const request of r.requests) {
      const answer = await post(`/v1/sessions/${state.live.id}/retarget`, request);
      if (answer.ok) showSessionState(answer.json);
      else logLive(`retarget ${request.path}: ${answer.status} ${(answer.json && answer.json.detail) || ""}`, "bad");
    }
  };
  stage.addEventListener("pointermove", move);
  stage.addEventListener("pointerup", up);
});

// ---------------------------------------------------------------------------------------
// The spring designer (shown when the server has POST /v1/springs)

const SPRING_FORMS = {
  "response-dampingRatio": { response: [0.05, 3, 0.5], dampingRatio: [0.05, 2, 0.6] },
  "duration-bounce": { duration: [0.05, 3, 0.5], bounce: [-0.9, 0.9, 0.3] },
  "stiffness-damping-mass": { stiffness: [1, 1000, 170], damping: [0, 100, 12], mass: [0.1, 10, 1] },
  "mass-tension-friction": { mass: [0.1, 10, 1], tension: [1, 1000, 170], friction: [0, 100, 26] },
  "stiffness-dampingRatio": { stiffness: [1, 2000, 400], dampingRatio: [0.05, 2, 0.5] },
  "frequency-damping": { frequency: [0.05, 3, 0.5], damping: [0.05, 2, 0.6] },
  "visualDuration-bounce": { visualDuration: [0.05, 3, 0.4], bounce: [0, 1, 0.3] },
  "overshoot-settlingTime": { overshoot: [0.001, 0.9, 0.1], settlingTime: [0.05, 5, 0.8] },
  "overshoot-peakTime": { overshoot: [0.001, 0.9, 0.1], peakTime: [0.02, 3, 0.3] },
  "dampingRatio-settlingTime": { dampingRatio: [0.05, 2, 0.7], settlingTime: [0.05, 5, 0.8] },
};
const springState = { form: "response-dampingRatio", values: {}, answer: null, serial: 0 };

function springBody() {
  const body = {};
  for (const key of Object.keys(SPRING_FORMS[springState.form])) body[key] = springState.values[key];
  return body;
}

function renderSpringInputs() {
  const select = $("spring-form");
  if (!select.childElementCount) {
    for (const form of Object.keys(SPRING_FORMS)) html("option", { value: form, text: form.replace(/-/g, " · ") }, select);
    select.addEventListener("change", () => { springState.form = select.value; renderSpringInputs(); springUpdate(); });
  }
  const box = $("spring-sliders");
  box.textContent = "";
  for (const [key, [min, max, initial]] of Object.entries(SPRING_FORMS[springState.form])) {
    if (springState.values[key] === undefined || springState.values[key] < min || springState.values[key] > max) springState.values[key] = initial;
    const row = html("label", { className: "slider" }, box);
    html("span", { className: "slider-name", text: key }, row);
    const step = Math.pow(10, Math.floor(Math.log10((max - min) / 300)));   // a round step: values read as typed
    const input = html("input", { type: "range", min: String(min), max: String(max), step: String(step), value: String(springState.values[key]) }, row);
    input.dataset.param = key;
    springState.values[key] = Number(input.value);   // as the slider holds it, on its step grid
    const out = html("output", { text: fmt(springState.values[key], 3) }, row);
    input.addEventListener("input", () => {
      springState.values[key] = Number(input.value);
      out.textContent = fmt(springState.values[key], 3);
      springUpdateSoon();
    });
  }
}

const springUpdateSoon = debounce(() => springUpdate(), 120);

async function springUpdate() {
  if (!state.springs || $("tab-springs").hidden) return;
  const serial = ++springState.serial;
  const body = springBody();
  const answer = await post("/v1/springs", body);
  if (serial !== springState.serial) return;
  const metrics = $("spring-metrics");
  metrics.textContent = "";
  if (!answer.ok) {
    const errors = (answer.json && answer.json.errors) || [];
    const message = errors.map((e) => `${e.pointer}: ${e.message}`).join("; ") || (answer.json && answer.json.detail) || `HTTP ${answer.status}`;
    html("div", { className: "spring-error", text: message }, metrics);
    $("spring-panel-state") && ($("spring-panel-state").textContent = message);
    springState.answer = null;
    drawSpringCurve(null);
    $("spring-table").textContent = "";
    return;
  }
  const s = answer.json;
  springState.answer = s;
  for (const [label, value, unit, key] of [
    ["damping ratio ζ", s.dampingRatio, "", "dampingRatio"], ["natural frequency ω₀", s.naturalFrequency, " rad/s", "naturalFrequency"],
    ["overshoot", s.overshoot * 100, " %", "overshoot"], ["peak time", s.peakTime, " s", "peakTime"],
    ["settling time", s.settlingTime, " s", "settlingTime"], ["damped period", s.dampedPeriod, " s", "dampedPeriod"],
    ["stiffness", s.stiffness, "", "stiffness"], ["damping", s.damping, "", "damping"], ["mass", s.mass, "", "mass"]]) {
    const item = html("div", { className: "metric", dataset: { metric: key } }, metrics);
    html("dt", { text: label }, item);
    html("dd", { text: value === null || value === undefined ? "—" : fmt(value, 3) + unit }, item);
  }
  drawSpringCurve(s);
  previewSpring(s);
  const table = $("spring-table");
  table.textContent = "";
  const head = html("tr", {}, table);
  html("th", { text: "form" }, head); html("th", { text: "parameters" }, head); html("th", {}, head);
  const rows = Object.entries(s.forms || {});
  if (s.easing && s.easing.css) rows.push(["CSS easing", `transition-timing-function: ${s.easing.css}; transition-duration: ${fmt(s.easing.duration, 3)}s;`]);
  for (const [form, params] of rows) {
    const row = html("tr", { dataset: { form } }, table);
    html("td", { className: "form-name", text: form }, row);
    const text = params === null ? "not expressible" : typeof params === "string" ? params : JSON.stringify(params);
    html("td", { className: params === null ? "code dim" : "code", text }, row);
    const cell = html("td", {}, row);
    if (params !== null) {
      const button = html("button", { type: "button", className: "ghost", text: "Copy" }, cell);
      button.addEventListener("click", () => copyText(text, button));
    }
  }
}

/// The CSS easing the server made, played by the browser itself: a ball across the preview.
function previewSpring(s) {
  const ball = $("spring-ball"), track = $("spring-preview");
  for (const animation of ball.getAnimations()) animation.cancel();
  if (!s.easing || !s.easing.css || !(s.easing.duration > 0)) return;
  const distance = Math.max(40, track.clientWidth - 64);
  try {
    ball.animate([{ transform: "translateX(0)" }, { transform: `translateX(${distance}px)` }],
                 { duration: Math.min(s.easing.duration, 10) * 1000, easing: s.easing.css, iterations: Infinity,
                   direction: "alternate", endDelay: 400 });
  } catch (_) { /* a browser without linear() easings */ }
}

/// x(t) of a spring from 0 to 1 at rest, from ω0 and ζ (closed form).
function springX(omega, zeta, t) {
  if (zeta < 1) {
    const wd = omega * Math.sqrt(1 - zeta * zeta);
    return 1 - Math.exp(-zeta * omega * t) * (Math.cos(wd * t) + (zeta * omega / wd) * Math.sin(wd * t));
  }
  if (zeta === 1) return 1 - Math.exp(-omega * t) * (1 + omega * t);
  const s = Math.sqrt(zeta * zeta - 1);
  const r1 = -omega * (zeta - s), r2 = -omega * (zeta + s);
  return 1 - (r2 * Math.exp(r1 * t) - r1 * Math.exp(r2 * t)) / (r2 - r1);
}

function drawSpringCurve(s) {
  const svg = $("spring-plot");
  svg.textContent = "";
  const width = svg.clientWidth || 420, height = 220, left = 34, right = 10, top = 12, bottom = 26;
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  if (!s) {
    const text = el("text", { x: width / 2, y: height / 2, class: "empty", "text-anchor": "middle" }, svg);
    text.textContent = "No spring has these parameters.";
    return;
  }
  const end = Math.max(0.1, (s.settlingTime || 1) * 1.3);
  const peak = 1 + Math.max(0, s.overshoot || 0);
  const low = Math.min(0, ...Array.from({ length: 200 }, (_, k) => springX(s.naturalFrequency, s.dampingRatio, k / 199 * end)));
  const x = (t) => left + t / end * (width - left - right);
  const y = (v) => top + (peak * 1.05 - v) / (peak * 1.05 - low) * (height - top - bottom);
  for (const v of [0, 1]) {
    el("line", { x1: left, x2: width - right, y1: y(v), y2: y(v), class: v ? "goal" : "grid" }, svg);
    const label = el("text", { x: left - 6, y: y(v) + 4, class: "axis-value", "text-anchor": "end" }, svg);
    label.textContent = String(v);
  }
  const step = niceStep(end, 5);
  for (let t = 0; t <= end + 1e-9; t += step) {
    const label = el("text", { x: x(t), y: height - 8, class: "tick", "text-anchor": "middle" }, svg);
    label.textContent = `${fmt(t, 2)} s`;
  }
  if (s.settlingTime) {
    el("line", { x1: x(s.settlingTime), x2: x(s.settlingTime), y1: top, y2: height - bottom, class: "event" }, svg);
    const label = el("text", { x: x(s.settlingTime) + 4, y: top + 10, class: "event-label" }, svg);
    label.textContent = "settled";
  }
  const d = Array.from({ length: 241 }, (_, k) => {
    const t = k / 240 * end;
    return `${k ? "L" : "M"}${x(t).toFixed(2)} ${y(springX(s.naturalFrequency, s.dampingRatio, t)).toFixed(2)}`;
  }).join("");
  el("path", { d, class: "track spring-curve-line", stroke: PALETTE[0] }, svg);
  if (s.peakTime) el("circle", { cx: x(s.peakTime), cy: y(1 + s.overshoot), r: 4, class: "peak" }, svg);
}

$("spring-use").addEventListener("click", () => {
  const s = springState.answer;
  if (!s) return;
  const params = s.forms && s.forms["response-dampingRatio"];
  const doc = { fps: 60, target: { x: 0 },
    motion: { type: "spring", ...(params || { stiffness: s.stiffness, damping: s.damping, mass: s.mass }), properties: [ { path: "x", to: 100 } ] } };
  setEditorText(prettyJSON(doc));
  runNow().then(() => play());
  window.scrollTo({ top: 0, behavior: "smooth" });
});

// ---------------------------------------------------------------------------------------
// Start-up: find out what this server supports, then load the first example.

async function discover() {
  const tiny = { fps: 10, target: { x: 0 }, motion: { type: "tween", duration: 0.2, properties: [ { path: "x", to: 1 } ] } };
  const formatProbes = EXPORT_FORMATS.map(async (format) => {
    const answer = await post("/v1/timelines", { ...tiny, output: { format: format.id } }).catch(() => null);
    // A server without the format refuses the field or its value, naming /output/format.
    const refused = !answer || (!answer.ok && (!answer.json || (answer.json.errors || []).some((e) => e.pointer === "/output/format")));
    return refused ? null : format.id;
  });
  // The spring designer needs POST /v1/springs: listed in the server's own openapi.yaml, and answering.
  const springProbe = fetch("/openapi.yaml").then((r) => r.text()).then((spec) => /^\s{2}\/v1\/springs:/m.test(spec)
    ? post("/v1/springs", { response: 0.5, dampingRatio: 0.7 }).then((a) => a.ok) : false).catch(() => false);
  const exampleProbes = window.PLAYGROUND_EXAMPLES.map(async (example) => {
    if (!example.probe) return example;
    const answer = await post("/v1/timelines", forPage(example.doc)).catch(() => null);
    return answer && answer.ok ? example : null;
  });
  const [formats, springs, examples] = await Promise.all([Promise.all(formatProbes), springProbe, Promise.all(exampleProbes)]);
  state.formats = ["document", "json", ...formats.filter(Boolean)];
  state.springs = springs;
  state.examples = examples.filter(Boolean);
}

async function start() {
  renderGutter();
  renderStage();
  renderPlot();
  try {
    await discover();
  } catch (error) {
    setStatus("The server cannot be reached", "bad");
    return;
  }
  const select = $("examples");
  for (const example of state.examples) html("option", { value: example.id, text: example.title }, select);
  renderFormatTabs();
  $("springs-tab").hidden = !state.springs;
  if (state.springs) renderSpringInputs();
  document.body.dataset.ready = "true";
  document.body.dataset.formats = state.formats.join(" ");
  document.body.dataset.springs = String(state.springs);
  await loadExample(location.hash.slice(1));
  document.body.dataset.loaded = "true";
}

window.addEventListener("resize", debounce(() => { renderStage(); renderPlot(); }, 150));
window.playground = { state, valuesAt, seekTo, play, pause, loadExample, runNow,
                      stageMap: () => stageLayout && stageLayout.area && stageLayout.area.map };
start();
