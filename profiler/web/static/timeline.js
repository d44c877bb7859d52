'use strict';
// The web UI's timeline tab: one step's (or a range of steps') Chrome trace
// on a canvas, a lane per (process, thread), each complete event at its
// recorded start and duration, under a time axis with ticks; a GPU's
// annotation lane (the program's ranges as the GPU saw them) above its
// streams, and a track per memory counter (bytes in use over time) below. The wheel zooms, dragging pans,
// hovering names an event, a click selects it and shows its details (args,
// launch dimensions, the host op that launched a kernel and the kernels a
// host op launched, each a link that selects it); the search box
// highlights the events whose name contains the text. Loaded before app.js,
// whose helpers it uses; app.js's router calls renderTimeline().

const TL_LABEL_W = 260;
const TL_LANE_H = 18;
const TL_AXIS_H = 22;
const TL_COUNTER_ROWS = 2;  // a counter track's height, in lanes

// The rows of a trace's complete events: a lane per (pid, tid), sorted; in
// a lane, events that nest (a host op and the ops it called) stack
// downwards, a row per nesting depth.
function traceLayout(spans) {
  const laneOf = new Map();
  for (const e of spans) laneOf.set(`${e.pid}/${e.tid}`, [e.pid, e.tid]);
  const lanes = [...laneOf.keys()].sort((a, b) => {
    const [pa, ta] = laneOf.get(a);
    const [pb, tb] = laneOf.get(b);
    return pa - pb || (ta > tb) - (ta < tb);
  });
  const depthOf = new Map();
  const rows = new Map();  // lane -> rows it needs
  const byLane = new Map(lanes.map((l) => [l, []]));
  for (const e of spans) byLane.get(`${e.pid}/${e.tid}`).push(e);
  for (const [l, list] of byLane) {
    list.sort((a, b) => a.ts - b.ts || (b.dur || 0) - (a.dur || 0));
    const ends = [];
    rows.set(l, 1);
    for (const e of list) {
      while (ends.length && ends[ends.length - 1] <= e.ts) ends.pop();
      depthOf.set(e, ends.length);
      rows.set(l, Math.max(rows.get(l), ends.length + 1));
      ends.push(e.ts + (e.dur || 0));
    }
  }
  const firstRow = new Map();
  let totalRows = 0;
  for (const l of lanes) {
    firstRow.set(l, totalRows);
    totalRows += rows.get(l);
  }
  return {lanes, laneOf, rows, firstRow, depthOf, totalRows};
}

// The trace's counters ("C" events): a track per (pid, name), its samples
// in time order (each holds until the next) and its largest value.
function counterTracks(events) {
  const tracks = new Map();
  for (const e of events) {
    if (e.ph !== 'C' || typeof e.ts !== 'number' || !e.args) continue;
    const key = `${e.pid}/${e.name}`;
    if (!tracks.has(key)) tracks.set(key, {pid: e.pid, name: e.name, samples: [], max: 0});
    const t = tracks.get(key);
    const v = Object.values(e.args).reduce((a, b) => a + (Number(b) || 0), 0);
    t.samples.push([e.ts, v]);
    t.max = Math.max(t.max, v);
  }
  const list = [...tracks.values()].sort((a, b) => a.pid - b.pid ||
    (a.name > b.name) - (a.name < b.name));
  for (const t of list) t.samples.sort((a, b) => a[0] - b[0]);
  return list;
}

// A counter's value at time t (its last sample at or before t), or null.
function counterAt(track, t) {
  let lo = 0;
  let hi = track.samples.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (track.samples[mid][0] <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo ? track.samples[lo - 1][1] : null;
}

// Tick times for [from, to]: a step of 1, 2 or 5 times a power of ten,
// about eight ticks.
function axisTicks(from, to) {
  const span = to - from;
  if (!(span > 0)) return {step: 0, ticks: []};
  const raw = span / 8;
  const p = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * p).find((s) => s >= raw);
  const ticks = [];
  for (let t = Math.ceil(from / step) * step; t <= to; t += step) ticks.push(t);
  return {step, ticks};
}

function tickLabel(us, step) {
  if (step >= 1000) return formatTime(Math.round(us));
  const digits = Math.max(0, -Math.floor(Math.log10(step)));
  return `${us.toFixed(digits)}us`;
}

// `text` cut from the left with '…' to fit `width` pixels (a lane's end,
// its device or thread number, is what tells lanes apart).
function fitLeft(g, text, width) {
  if (g.measureText(text).width <= width) return text;
  let lo = 0;
  while (lo < text.length && g.measureText('…' + text.slice(lo)).width > width) ++lo;
  return '…' + text.slice(lo);
}

// The host op that launched a kernel (args.op names its node) and the
// kernels a host op launched, among the step's events: the run of that node
// around the launch call the trace's arrow starts from (a "launch" flow
// event), else the run that started last before the kernel.
function launchLinks(spans, events) {
  const byNode = new Map();
  const byOp = new Map();
  for (const e of spans) {
    const a = e.args || {};
    if (a.node !== undefined) {
      if (!byNode.has(a.node)) byNode.set(a.node, []);
      byNode.get(a.node).push(e);
    }
    if (a.op !== undefined) {
      if (!byOp.has(a.op)) byOp.set(a.op, []);
      byOp.get(a.op).push(e);
    }
  }
  // Each arrow's call ("s" event), by the lane and start of the work it
  // ends on ("f" event).
  const starts = new Map();
  for (const e of events) if (e.cat === 'launch' && e.ph === 's') starts.set(e.id, e);
  const callOf = new Map();
  for (const e of events) {
    if (e.cat === 'launch' && e.ph === 'f' && starts.has(e.id)) {
      callOf.set(`${e.pid}/${e.tid}/${e.ts}`, starts.get(e.id));
    }
  }
  const launcher = (k) => {
    const runs = byNode.get((k.args || {}).op) || [];
    const call = callOf.get(`${k.pid}/${k.tid}/${k.ts}`);
    let best = null;
    if (call) {
      for (const r of runs) {
        if (r.pid === call.pid && r.tid === call.tid && r.ts <= call.ts &&
            call.ts <= r.ts + (r.dur || 0) && (!best || r.ts > best.ts)) best = r;
      }
      if (best) return best;
    }
    for (const r of runs) if (r.ts <= k.ts && (!best || r.ts > best.ts)) best = r;
    return best;
  };
  const launched = (op) => (byOp.get((op.args || {}).node) || [])
    .filter((k) => launcher(k) === op);
  return {launcher, launched};
}

function traceDetails(e, t0, links, select) {
  const box = el('div', {id: 'timeline-details', 'data-name': e.name});
  const rows = [['name', e.name], ['category', e.cat || ''],
    ['start', `${(e.ts - t0).toFixed(3)}us`], ['duration', `${(e.dur || 0).toFixed(3)}us`]];
  for (const [k, v] of Object.entries(e.args || {})) {
    rows.push([`args.${k}`, typeof v === 'object' ? JSON.stringify(v) : String(v)]);
  }
  box.append(el('table', {class: 'plain details'}, el('tbody', {}, rows.map(([k, v]) =>
    el('tr', {'data-key': k}, el('th', {}, k), el('td', {class: 'name', title: v}, v))))));
  const link = (x) => el('a', {href: '#', class: 'event-link', 'data-name': x.name,
    onclick: (ev) => {
      ev.preventDefault();
      select(x);
    }}, `${x.name} @ ${(x.ts - t0).toFixed(3)}us`);
  const by = links.launcher(e);
  if (by) box.append(el('p', {class: 'launcher'}, 'launched by: ', link(by)));
  const kids = links.launched(e);
  if (kids.length) {
    box.append(el('p', {class: 'launched'}, `launched ${kids.length} kernel(s)/copies: `,
      kids.slice(0, 200).flatMap((k, i) => [i ? ', ' : '', link(k)])));
  }
  return box;
}

// Keeps the view's window and the selected event in the URL (replacing the
// history entry: no new route), so a shared link shows the same moment.
function saveTraceState(state, t0, spans) {
  const hp = hashParams();
  hp.set('window', state.view.map((t) => (t - t0).toFixed(3)).join(','));
  if (state.selected) hp.set('event', String(spans.indexOf(state.selected)));
  else hp.delete('event');
  history.replaceState(null, '', '#' + hp);
}

// One step's Chrome trace on a canvas; `hp` may hold the window
// (window=FROM,TO in microseconds from the first event) and the selected
// event (event=INDEX among the step's complete events).
function renderTrace(container, trace, hp) {
  const events = Array.isArray(trace) ? trace : (trace.traceEvents || []);
  const names = new Map();
  for (const e of events) {
    if (e.ph !== 'M' || !e.args) continue;
    if (e.name === 'process_name') names.set(`${e.pid}`, e.args.name);
    if (e.name === 'thread_name') names.set(`${e.pid}/${e.tid}`, e.args.name);
  }
  const spans = events.filter((e) => e.ph === 'X' && typeof e.ts === 'number');
  const {lanes, laneOf, rows, firstRow, depthOf, totalRows} = traceLayout(spans);
  const counters = counterTracks(events);
  const rowOf = (e) => firstRow.get(`${e.pid}/${e.tid}`) + depthOf.get(e);
  // (reduce, not Math.min(...): a step can hold more events than a call
  // takes arguments)
  const t0 = spans.reduce((m, e) => Math.min(m, e.ts), Infinity);
  const t1 = spans.reduce((m, e) => Math.max(m, e.ts + (e.dur || 0)), -Infinity);
  const annotations = spans.filter((e) => e.cat === 'Annotation').length;
  container.append(el('p', {id: 'timeline-info'}, spans.length ?
    `${spans.length} events on ${lanes.length} lanes, ` +
    `${formatTime(Math.round(t1 - t0))} from the first event's start to the last's end` +
    (annotations ? `; ${annotations} GPU annotation ranges` : '') +
    (counters.length ? `; ${counters.length} memory counter track(s)` : '') :
    'no events in this step'));
  if (!spans.length) return;
  const links = launchLinks(spans, events);
  const search = el('input', {id: 'timeline-search', type: 'search',
    placeholder: 'search event names'});
  const found = el('span', {id: 'timeline-search-count', class: 'notes'});
  const download = el('a', {id: 'timeline-download', href: '#', download: 'timeline.json'},
    'download the Chrome trace (Perfetto, chrome://tracing)');
  // The trace's JSON is written when the link is first used (half a second
  // for a step of 100k events), before the click follows the link.
  download.addEventListener('click', () => {
    if (download.href.startsWith('blob:')) return;
    download.href = URL.createObjectURL(new Blob([JSON.stringify(trace)],
      {type: 'application/json'}));
  });
  container.append(el('div', {class: 'timeline-bar'}, search, found, download));
  const canvas = el('canvas', {class: 'timeline', id: 'timeline-canvas'});
  const width = Math.max(600, container.clientWidth - 30);
  canvas.width = width;
  canvas.height = (totalRows + counters.length * TL_COUNTER_ROWS) * TL_LANE_H + TL_AXIS_H + 4;
  canvas.dataset.counters = JSON.stringify(counters.map((c) => ({name: c.name,
    samples: c.samples.length, max: c.max})));
  canvas.dataset.annotations = String(annotations);
  const details = el('div', {id: 'timeline-details-box'},
    el('p', {class: 'notes'}, 'Click an event for its details.'));
  container.append(canvas, details);
  const state = {view: [t0, t1 > t0 ? t1 : t0 + 1], selected: null, query: ''};
  const win = (hp.get('window') || '').split(',').map(Number);
  if (win.length === 2 && win.every(Number.isFinite) && win[1] > win[0]) {
    state.view = [t0 + win[0], t0 + win[1]];
  }
  const x = (t) => TL_LABEL_W + (t - state.view[0]) / (state.view[1] - state.view[0]) *
    (width - TL_LABEL_W);
  const draw = () => drawTrace(canvas, {lanes, laneOf, rows, firstRow, names, spans,
    rowOf, t0, x, state, width, counters, totalRows});
  const select = (e) => {
    state.selected = e;
    details.replaceChildren(traceDetails(e, t0, links, select));
    draw();
    saveTraceState(state, t0, spans);
  };
  search.addEventListener('input', () => {
    state.query = search.value.toLowerCase();
    const n = state.query ? spans.filter((e) => (e.name || '').toLowerCase()
      .includes(state.query)).length : 0;
    found.textContent = state.query ? `${n} events match` : '';
    found.dataset.count = String(n);
    draw();
  });
  let saving = null;
  const moved = () => {
    draw();
    clearTimeout(saving);
    saving = setTimeout(() => saveTraceState(state, t0, spans), 200);
  };
  attachTraceMouse(canvas, {spans, rowOf, totalRows, state, width, t0, draw: moved, select,
    counters});
  const chosen = spans[Number(hp.get('event'))];
  if (hp.has('event') && chosen) select(chosen);
  else draw();
}

function laneLabel(names, laneOf, l) {
  const [pid] = laneOf.get(l);
  return `${names.get(`${pid}`) || pid} / ${names.get(l) || l.split('/')[1]}`;
}

// The counter tracks under the lanes: a step area per counter (a value
// holds until the next sample), scaled to its largest value.
function drawCounters(g, d) {
  const {counters, totalRows, names, x, width} = d;
  const h = TL_COUNTER_ROWS * TL_LANE_H;
  counters.forEach((c, i) => {
    const y = TL_AXIS_H + (totalRows + i * TL_COUNTER_ROWS) * TL_LANE_H;
    g.fillStyle = '#eef3f8';
    g.fillRect(0, y, width, h);
    g.fillStyle = '#333';
    g.fillText(fitLeft(g, `${names.get(`${c.pid}`) || c.pid} / ${c.name}`, TL_LABEL_W - 8),
      4, y + 13);
    g.fillStyle = '#666';
    g.fillText(`peak ${formatBytes(c.max)}`, 4, y + 28);
    g.save();
    g.beginPath();
    g.rect(TL_LABEL_W, y, width - TL_LABEL_W, h);
    g.clip();
    g.fillStyle = 'rgba(70, 130, 180, 0.6)';
    g.beginPath();
    g.moveTo(Math.max(TL_LABEL_W, x(c.samples[0][0])), y + h);
    const scale = (v) => y + h - (c.max > 0 ? v / c.max : 0) * (h - 3);
    c.samples.forEach(([t, v], k) => {
      const x0 = Math.max(TL_LABEL_W - 1, Math.min(width + 1, x(t)));
      const next = k + 1 < c.samples.length ? c.samples[k + 1][0] : null;
      const x1 = next === null ? width + 1 : Math.max(TL_LABEL_W - 1, Math.min(width + 1, x(next)));
      g.lineTo(x0, scale(v));
      g.lineTo(x1, scale(v));
    });
    g.lineTo(width + 1, y + h);
    g.closePath();
    g.fill();
    g.restore();
  });
}

function drawTrace(canvas, d) {
  const {lanes, laneOf, rows, firstRow, names, spans, rowOf, t0, x, state, width} = d;
  const g = canvas.getContext('2d');
  g.clearRect(0, 0, width, canvas.height);
  g.font = '11px monospace';
  canvas.dataset.lanes = JSON.stringify(lanes.map((l) => laneLabel(names, laneOf, l)));
  drawCounters(g, d);
  lanes.forEach((l, i) => {
    const y = TL_AXIS_H + firstRow.get(l) * TL_LANE_H;
    g.fillStyle = i % 2 ? '#f6f7f9' : '#fff';
    g.fillRect(0, y, width, rows.get(l) * TL_LANE_H);
    g.fillStyle = '#333';
    const label = laneLabel(names, laneOf, l);
    // An aligned trace of several ranks keeps its "rank N: " in front.
    const rank = /^rank \d+: /.exec(label);
    const head = rank ? rank[0] : '';
    g.fillText(head + fitLeft(g, label.slice(head.length),
      TL_LABEL_W - 8 - g.measureText(head).width), 4, y + 13);
  });
  g.save();
  g.beginPath();
  g.rect(TL_LABEL_W, 0, width - TL_LABEL_W, canvas.height);
  g.clip();
  for (const e of spans) {
    const x0 = x(e.ts);
    const x1 = x(e.ts + (e.dur || 0));
    if (x1 < TL_LABEL_W || x0 > width) continue;
    const y = TL_AXIS_H + rowOf(e) * TL_LANE_H;
    const hit = !state.query || (e.name || '').toLowerCase().includes(state.query);
    g.globalAlpha = hit ? 1 : 0.15;
    // A GPU annotation (a range, not work) in one muted colour.
    g.fillStyle = e.cat === 'Annotation' ? '#cdbfe6' : flameColor(e.name || '');
    g.fillRect(x0, y + 1, Math.max(1, x1 - x0), TL_LANE_H - 2);
    if (x1 - x0 > 40) {
      g.fillStyle = '#111';
      // Kept on screen when the event starts left of the view.
      const left = Math.max(x0, TL_LABEL_W) + 2;
      g.fillText((e.name || '').slice(0, Math.floor((x1 - left) / 7)), left, y + 13);
    }
    if (e === state.selected) {
      g.globalAlpha = 1;
      g.strokeStyle = '#000';
      g.lineWidth = 2;
      g.strokeRect(x0, y + 1, Math.max(2, x1 - x0), TL_LANE_H - 2);
    }
  }
  g.globalAlpha = 1;
  // The axis: ticks relative to the step's first event.
  const {step, ticks} = axisTicks(state.view[0] - t0, state.view[1] - t0);
  canvas.dataset.ticks = JSON.stringify(ticks);
  canvas.dataset.view = JSON.stringify([state.view[0] - t0, state.view[1] - t0]);
  g.fillStyle = '#fff';
  g.fillRect(TL_LABEL_W, 0, width, TL_AXIS_H);
  g.strokeStyle = '#999';
  g.lineWidth = 1;
  g.fillStyle = '#555';
  for (const t of ticks) {
    const px = Math.round(x(t + t0)) + 0.5;
    g.beginPath();
    g.moveTo(px, TL_AXIS_H - 6);
    g.lineTo(px, TL_AXIS_H);
    g.stroke();
    g.fillText(tickLabel(t, step), px + 2, 11);
  }
  g.restore();
}

function attachTraceMouse(canvas, d) {
  const {spans, rowOf, totalRows, state, width, t0, draw, select, counters} = d;
  const timeAt = (px) => state.view[0] + (px - TL_LABEL_W) / (width - TL_LABEL_W) *
    (state.view[1] - state.view[0]);
  const eventAt = (px, py) => {
    const row = Math.floor((py - TL_AXIS_H) / TL_LANE_H);
    if (row < 0 || row >= totalRows || px < TL_LABEL_W) return null;
    const t = timeAt(px);
    const slack = (state.view[1] - state.view[0]) / (width - TL_LABEL_W);
    let best = null;
    for (const e of spans) {
      if (rowOf(e) !== row) continue;
      if (t >= e.ts - slack && t <= e.ts + (e.dur || 0) + slack &&
          (!best || (e.dur || 0) < (best.dur || 0))) best = e;
    }
    return best;
  };
  canvas.addEventListener('wheel', (ev) => {
    ev.preventDefault();
    const r = canvas.getBoundingClientRect();
    const t = timeAt(Math.max(TL_LABEL_W, ev.clientX - r.left));
    const k = ev.deltaY > 0 ? 1.25 : 0.8;
    state.view = [t - (t - state.view[0]) * k, t + (state.view[1] - t) * k];
    draw();
  });
  let drag = null;
  canvas.addEventListener('mousedown', (ev) => {
    drag = {x: ev.clientX, view: state.view, moved: false};
  });
  window.addEventListener('mouseup', () => { drag = null; });
  canvas.addEventListener('click', (ev) => {
    const r = canvas.getBoundingClientRect();
    const e = eventAt(ev.clientX - r.left, ev.clientY - r.top);
    if (e) select(e);
  });
  canvas.addEventListener('mousemove', (ev) => {
    const r = canvas.getBoundingClientRect();
    if (drag && ev.buttons) {
      const dt = (ev.clientX - drag.x) / (width - TL_LABEL_W) * (drag.view[1] - drag.view[0]);
      state.view = [drag.view[0] - dt, drag.view[1] - dt];
      draw();
      return;
    }
    const px = ev.clientX - r.left;
    const row = Math.floor((ev.clientY - r.top - TL_AXIS_H) / TL_LANE_H);
    const c = counters[Math.floor((row - totalRows) / TL_COUNTER_ROWS)];
    if (row >= totalRows && c && px >= TL_LABEL_W) {
      const v = counterAt(c, timeAt(px));
      tooltip(ev, `${c.name}: ${v === null ? 'no sample yet' : formatBytes(v) + ' in use'}` +
        `\nat ${(timeAt(px) - t0).toFixed(3)}us`);
      return;
    }
    const e = eventAt(px, ev.clientY - r.top);
    tooltip(e ? ev : null, e ? `${e.name}\nstart: ${(e.ts - t0).toFixed(3)}us` +
      `\nduration: ${(e.dur || 0).toFixed(3)}us` : '');
  });
  canvas.addEventListener('mouseleave', () => tooltip(null));
}

// hp: step=N, or steps=A-B (a trace's steps A to B on one clock); the
// overview's step bars open one step.
async function renderTimeline(hp, content) {
  const range = /^(\d+)-(\d+)$/.exec(hp.get('steps') || '');
  const step = range ? range[1] :
    hp.get('step') || (info.steps.length ? String(info.steps[0]) : '');
  const q = new URLSearchParams();
  if (range) q.set('steps', `${range[1]}-${range[2]}`);
  else if (step !== '') q.set('step', step);
  const t = await api('/api/timeline', q);
  const options = () => info.steps.map((s) => el('option', {value: String(s)}, String(s)));
  const select = el('select', {id: 'timeline-step'}, options());
  select.value = String(t.step);
  const to = el('select', {id: 'timeline-last-step'}, options());
  to.value = String(t.last_step);
  const go = (first, last) => {
    const next = hashParams();
    next.delete('window');
    next.delete('event');
    if (Number(last) > Number(first)) {
      next.set('steps', `${first}-${last}`);
      next.delete('step');
    } else {
      next.set('step', first);
      next.delete('steps');
    }
    setHash(next);
  };
  select.addEventListener('change', () => go(select.value, select.value));
  to.addEventListener('change', () => go(select.value, to.value));
  content.append(el('label', {}, 'step ', select));
  // A range of steps is drawn from a trace's own events only.
  if (t.source === 'trace') content.append(el('label', {}, ' to ', to));
  setCommand(t.source === 'graph view' ?
    `tfprof ${info.input_flags} graph -step ${t.step} -max_depth 1000000 -output timeline:outfile=timeline.json` :
    `tfprof ${info.input_flags} timeline -step ${t.step}`);
  content.append(el('p', {class: 'notes', id: 'timeline-steps'}, t.last_step > t.step ?
    `Steps ${t.step} to ${t.last_step} on one clock (from step ${t.step}'s start): ` +
    `${t.source} events. (The command line draws one step; this is ` +
    `/api/timeline?steps=${t.step}-${t.last_step}.)` :
    `Step ${t.step}: ${t.source} events.`));
  renderTrace(content, t.trace, hp);
}
