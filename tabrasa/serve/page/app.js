// The page of `tabrasa serve`: one input to POST /predict, its prediction, and the attention view the
// server returns with it (attention: true), drawn on canvases as `tabrasa inspect` plots it. No build step.
"use strict";

const $ = (id) => document.getElementById(id);
const state = { info: null, tasks: {} };
const TEXT_KINDS = ["text", "protein"];
const PLACEHOLDER = {
  text: "Type or paste a text",
  protein: "Paste an amino-acid sequence (or FASTA text)",
};
const FILE_HINT = {
  image: "an image file (PNG, JPEG, ...)",
  audio: "an audio clip (WAV, FLAC or OGG)",
};

function headers(json) {
  const out = json ? { "Content-Type": "application/json" } : {};
  const key = $("key").value.trim();
  if (key) out["X-API-Key"] = key;
  return out;
}

function showError(message) {
  $("error").textContent = message;
  $("error").hidden = !message;
}

async function loadInfo() {
  const response = await fetch("/info", { headers: headers(false) });
  if (response.status === 401) {
    $("key-row").hidden = false;
    $("model").textContent = "This server needs an API key: type it above.";
    return;
  }
  if (!response.ok) {
    showError(`GET /info answered ${response.status}`);
    return;
  }
  const info = (await response.json()).model;
  state.info = info;
  $("key-row").hidden = !info.api_key;
  const select = $("task");
  select.innerHTML = "";
  for (const task of info.tasks) {
    state.tasks[task.name] = task;
    const option = document.createElement("option");
    option.value = task.name;
    option.textContent = `${task.name} (${task.modality})`;
    select.appendChild(option);
  }
  $("task-row").hidden = info.tasks.length < 2;
  const names = info.tasks.map((t) => `${t.name}: ${t.modality}`).join(", ");
  $("model").textContent = `${info.run} — ${names} — backend ${info.backend}`;
  showTask();
  $("predict").disabled = false;
  showError("");
}

function currentTask() {
  return state.tasks[$("task").value];
}

function showTask() {
  const task = currentTask();
  const textual = TEXT_KINDS.includes(task.modality);
  $("text-input").hidden = !textual;
  $("file-input").hidden = textual;
  $("text").placeholder = PLACEHOLDER[task.modality] || "";
  $("file").accept = task.modality === "image" ? "image/*" : task.modality === "audio" ? "audio/*" : "";
  $("file-hint").textContent = FILE_HINT[task.modality] || "";
}

function readFile(file, asText) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(reader.result);
    reader.onerror = () => reject(new Error(`cannot read ${file.name}`));
    if (asText) reader.readAsText(file);
    else reader.readAsDataURL(file); // the server accepts the data: URL's base64 as it is
  });
}

async function requestBody() {
  const task = currentTask();
  const body = { task: task.name, attention: $("want-attention").checked };
  if (TEXT_KINDS.includes(task.modality)) {
    body[task.modality] = $("text").value;
    return body;
  }
  const file = $("file").files[0];
  if (!file) throw new Error(`choose ${FILE_HINT[task.modality]} first`);
  body[task.modality] = await readFile(file, false);
  return body;
}

async function predict() {
  showError("");
  $("predict").disabled = true;
  try {
    const body = await requestBody();
    const response = await fetch("/predict", {
      method: "POST", headers: headers(true), body: JSON.stringify(body),
    });
    const answer = await response.json().catch(() => ({ detail: `answer ${response.status} is not JSON` }));
    if (!response.ok) {
      $("answer").hidden = true;
      $("attention").hidden = true;
      showError(`${response.status}: ${answer.detail}`);
      return;
    }
    render(answer);
  } catch (error) {
    showError(error.message);
  } finally {
    $("predict").disabled = false;
  }
}

function render(answer) {
  const prediction = Array.isArray(answer.prediction)
    ? answer.prediction.map((v) => v.toFixed(4)).join(", ") : String(answer.prediction);
  $("prediction").textContent = prediction;
  const table = $("probabilities");
  table.innerHTML = "";
  for (const [column, value] of Object.entries(answer)) {
    if (!column.startsWith("prob_")) continue;
    const row = table.insertRow();
    row.insertCell().textContent = column.slice(5);
    row.insertCell().textContent = value.toFixed(3);
    const bar = document.createElement("div");
    bar.className = "bar";
    bar.style.width = `${Math.round(value * 200)}px`;
    row.insertCell().appendChild(bar);
  }
  const warnings = $("warnings");
  warnings.innerHTML = "";
  for (const warning of answer.warnings || []) {
    const item = document.createElement("li");
    item.textContent = warning;
    warnings.appendChild(item);
  }
  $("answer").hidden = false;
  drawAttention(answer.attention);
}

// Drawing -----------------------------------------------------------------------------------------------

function scaled(values, fromZero) {
  // to [0, 1]: from 0 to the largest value (weights, as inspect draws them), or from the smallest to the
  // largest (rollout shares, which differ little between tokens of a short input)
  const flat = values.flat();
  const top = Math.max(...flat);
  const low = fromZero ? 0 : Math.min(...flat);
  const span = Math.max(top - low, 1e-12);
  return values.map((v) => (Array.isArray(v) ? v.map((x) => (x - low) / span) : (v - low) / span));
}

function mix(from, to, t) {
  return from.map((f, i) => Math.round(f + (to[i] - f) * t));
}

const WHITE = [255, 255, 255];
const ORANGE = [230, 85, 13];
const BLUE = [8, 48, 107];

function heatColour(value) {
  const [r, g, b] = mix(WHITE, ORANGE, value);
  return `rgb(${r}, ${g}, ${b})`;
}

function weightColour(value) {
  const [r, g, b] = mix(WHITE, BLUE, value);
  return `rgb(${r}, ${g}, ${b})`;
}

function overlayColour(value) {
  return `rgba(${ORANGE.join(", ")}, ${(0.75 * value).toFixed(3)})`;
}

function resetAttention() {
  for (const id of ["matrix", "picture", "strip", "layer-row", "picture-note"]) $(id).hidden = true;
  $("tokens").innerHTML = "";
  $("attention").removeAttribute("data-drawn");
}

function drawAttention(view) {
  resetAttention();
  if (!view) {
    $("attention").hidden = true;
    return;
  }
  $("attention").hidden = false;
  $("attention-note").textContent =
    `${view.layers} layers × ${view.heads} heads, rolled out over the layers (Abnar & Zuidema 2020)` +
    (view.registers ? `; ${view.registers} register tokens left out` : "");
  if (view.kind === "tokens") {
    drawTokens(view);
    done(view);
    return;
  }
  drawPicture(view, view.kind === "audio" ? 640 : 320)
    .then(() => {
      if (view.kind === "audio") drawStrip(view);
      done(view);
    })
    .catch((error) => showError(error.message));
}

function done(view) {
  $("attention").setAttribute("data-drawn", view.kind);
}

function drawTokens(view) {
  const heat = scaled(view.heat, false);
  const box = $("tokens");
  view.tokens.forEach((token, i) => {
    const span = document.createElement("span");
    span.textContent = token;
    span.title = `${token}: ${view.heat[i].toFixed(4)}`;
    span.style.background = heatColour(heat[i]);
    box.appendChild(span);
  });
  if (!view.matrices) return;
  const select = $("layer");
  select.innerHTML = "";
  view.matrices.forEach((_, i) => {
    const option = document.createElement("option");
    option.value = String(i);
    option.textContent = String(i + 1);
    select.appendChild(option);
  });
  select.value = String(view.matrices.length - 1);
  select.onchange = () => drawMatrix(view.matrices[Number(select.value)]);
  $("layer-row").hidden = false;
  drawMatrix(view.matrices[view.matrices.length - 1]);
}

function drawMatrix(matrix) {
  const canvas = $("matrix");
  const n = matrix.length;
  const cell = Math.max(3, Math.floor(360 / n));
  canvas.width = canvas.height = cell * n;
  const context = canvas.getContext("2d");
  const values = scaled(matrix, true);
  for (let q = 0; q < n; q++) {
    for (let k = 0; k < n; k++) {
      context.fillStyle = weightColour(values[q][k]);
      context.fillRect(k * cell, q * cell, cell, cell);
    }
  }
  canvas.hidden = false;
}

function loadImage(source) {
  return new Promise((resolve, reject) => {
    const image = new Image();
    image.onload = () => resolve(image);
    image.onerror = () => reject(new Error("the attention picture cannot be shown"));
    image.src = source;
  });
}

async function drawPicture(view, width) {
  const image = await loadImage(view.picture);
  const canvas = $("picture");
  const scale = width / image.width;
  canvas.width = width;
  // an image keeps its aspect; a spectrogram (mel bins × frames) is drawn 160 px high
  canvas.height = view.kind === "audio" ? 160 : Math.max(1, Math.round(image.height * scale));
  const context = canvas.getContext("2d");
  context.imageSmoothingEnabled = false;
  context.drawImage(image, 0, 0, canvas.width, canvas.height);
  if (view.heat && view.grid) {
    const [rows, cols] = view.grid;
    const heat = scaled(view.heat, false);
    const h = canvas.height / rows;
    const w = canvas.width / cols;
    for (let r = 0; r < rows; r++) {
      for (let c = 0; c < cols; c++) {
        context.fillStyle = overlayColour(heat[r][c]);
        context.fillRect(c * w, r * h, w, h);
      }
    }
  }
  canvas.hidden = false;
  $("picture-note").textContent = view.kind === "image"
    ? "the model's input, each patch tinted by its share of the output (orange: most)"
    : "log-mel spectrogram (time →, low frequencies at the bottom)" +
      (view.grid ? ", each patch tinted by its share of the output" : "") +
      "; below, the share of each time step";
  $("picture-note").hidden = false;
}

function drawStrip(view) {
  const canvas = $("strip");
  canvas.width = $("picture").width;
  canvas.height = 28;
  const context = canvas.getContext("2d");
  const heat = scaled(view.strip, false);
  const w = canvas.width / heat.length;
  heat.forEach((value, i) => {
    context.fillStyle = heatColour(value);
    context.fillRect(i * w, 0, Math.ceil(w), canvas.height);
  });
  canvas.title = `one cell per ${view.grid ? "patch column" : "frame"} (${view.hop_ms} ms hop)`;
  canvas.hidden = false;
}

$("task").addEventListener("change", showTask);
$("predict").addEventListener("click", predict);
$("key").addEventListener("change", loadInfo);
$("text-file").addEventListener("change", async () => {
  const file = $("text-file").files[0];
  if (file) $("text").value = await readFile(file, true);
});
loadInfo().catch((error) => showError(error.message));
