'use strict';
// The web UI's overview (its first page) and steps tab: where each step's
// time goes (compute / memcpy / communication / idle, the columns of
// `tfprof steps`), GPU utilization, peak memory per device, MFU, the top
// kernels and ops with their share, and a one-line diagnosis; plus the
// sortable tables of plain rows both use. Loaded before app.js, whose
// helpers (el, api, format, formatTime, setHash, ...) it uses when a page is
// drawn; app.js's router calls renderOverview() and renderSteps().

// The parts of a step's wall time, stacked from the bottom, as the steps
// API names them. Communication is stacked by its exposed part (no compute
// kernel ran meanwhile); the rest of it, overlapped with compute, is drawn
// hatched over the compute part (`overlapped`: the column of the whole).
// Parts may still overlap each other (a copy beside a kernel), so a stack
// can pass the wall time; the bar's outline is the wall time.
const STEP_PARTS = [
  {key: 'compute_micros', label: 'compute'},
  {key: 'memcpy_micros', label: 'memcpy'},
  {key: 'exposed_communication_micros', label: 'communication',
    whole: 'communication_micros'},
  {key: 'idle_micros', label: 'idle'},
];

// The parts present in `steps` (communication only when some step has
// it), or [] when no step ran accelerator work or communication (a
// CPU-only run: the chart draws the wall time).
function stepParts(steps) {
  const comm = steps.some((s) => s.communication_micros > 0);
  if (!comm && !steps.some((s) => s.accelerator_micros > 0)) return [];
  return STEP_PARTS.filter((p) => (p.whole ? comm : true) &&
    steps.every((s) => typeof s[p.key] === 'number' &&
      (!p.whole || typeof s[p.whole] === 'number')));
}

function percentText(part, whole) {
  return whole > 0 ? `${(100 * part / whole).toFixed(1)}%` : 'n/a';
}

// A bar per step: its wall time, split into the parts when the steps have
// them. A bar opens that step's timeline.
function stepsChart(steps) {
  const parts = stepParts(steps);
  const walls = steps.map((s) => Number(s.wall_micros) || 0);
  const stacks = steps.map((s) => parts.reduce((a, p) => a + (Number(s[p.key]) || 0), 0));
  const max = Math.max(1, ...walls, ...stacks);
  const w = Math.max(300, Math.min(1200, steps.length * 24));
  const h = 160;
  const bw = w / Math.max(1, steps.length);
  const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
  svg.setAttribute('class', 'chart');
  svg.setAttribute('id', 'steps-chart');
  svg.setAttribute('width', w + 60);
  svg.setAttribute('height', h + 20);
  const add = (tag, attrs, text) => svgElement(svg, tag, attrs, text);
  add('text', {x: 2, y: 10}, formatTime(Math.round(max)));
  add('text', {x: 2, y: h}, '0');
  steps.forEach((s, i) => {
    const x = 60 + i * bw + 1;
    const width = Math.max(1, bw - 2);
    let y = h;
    const lines = [`step ${s.step}: ${formatTime(Math.round(walls[i]))} wall`];
    let computeTop = h;
    for (const p of parts) {
      const v = Number(s[p.key]) || 0;
      const ph = h * v / max;
      y -= ph;
      add('rect', {class: `part part-${p.label}`, x, y, width, height: ph,
        'data-step': s.step, 'data-part': p.key, 'data-value': v});
      if (p.key === 'compute_micros') computeTop = y;
      if (!p.whole) {
        lines.push(`${p.label}: ${formatTime(Math.round(v))} (${percentText(v, walls[i])})`);
        continue;
      }
      const whole = Number(s[p.whole]) || 0;
      const over = Math.max(0, whole - v);
      // The overlapped part, hatched over the top of the compute part.
      add('rect', {class: `part part-${p.label}-overlapped`, x, y: computeTop, width,
        height: h * over / max, 'data-step': s.step, 'data-part': p.whole,
        'data-value': whole});
      lines.push(`${p.label}: ${formatTime(Math.round(whole))}, exposed ` +
        `${formatTime(Math.round(v))} (${percentText(v, walls[i])}), overlapped with ` +
        `compute ${formatTime(Math.round(over))}`);
    }
    // The whole bar: the wall time, the tooltip and the click.
    const bh = h * walls[i] / max;
    if (parts.length) {
      add('line', {class: 'wall-mark', x1: x, x2: x + width, y1: h - bh, y2: h - bh,
        'data-step': s.step});
    }
    const r = add('rect', {class: parts.length ? 'bar stacked' : 'bar', x,
      y: h - bh, width, height: bh, 'data-step': s.step, 'data-value': walls[i]});
    const t = document.createElementNS(svg.namespaceURI, 'title');
    t.textContent = lines.join('\n') + (info.has_timeline ? '\nclick: its timeline' : '');
    r.append(t);
    if (info.has_timeline) {
      r.addEventListener('click', () => setHash(new URLSearchParams(
        {tab: 'timeline', step: String(s.step)})));
    }
  });
  steps.forEach((s, i) => {
    if (steps.length <= 30 || i % Math.ceil(steps.length / 30) === 0) {
      add('text', {x: 60 + i * bw + 2, y: h + 14}, String(s.step));
    }
  });
  const box = el('div', {class: 'chart-box'}, svg);
  if (parts.length) {
    box.append(el('div', {class: 'legend', id: 'steps-legend'}, parts.flatMap((p) => [
      el('span', {}, el('i', {class: `swatch part-${p.label}`}),
        p.whole ? `${p.label} (exposed)` : p.label),
      p.whole ? el('span', {}, el('i', {class: `swatch part-${p.label}-overlapped`}),
        `${p.label} overlapped with compute`) : null]),
    el('span', {}, el('i', {class: 'swatch wall-swatch'}),
      'wall time (parts that ran side by side can stack past it)')));
  }
  return box;
}

// A table of plain objects, a column per key. `formats` maps a key to the
// function that writes its raw value; a header click sorts by the raw
// values (numbers as numbers; again to reverse). Text columns are
// left-aligned and cut with an ellipsis, the full text on hover.
function objectTable(rows, id, formats) {
  if (!rows.length) return el('p', {class: 'notes'}, 'none');
  const keys = Object.keys(rows[0]);
  const text = (k, v) => {
    if (v === null || v === undefined) return '';
    if (formats && formats[k]) return formats[k](v);
    return typeof v === 'object' ? JSON.stringify(v) : String(v);
  };
  const numeric = (k) => rows.every((r) => typeof r[k] === 'number');
  const tbody = el('tbody');
  const fill = (list) => tbody.replaceChildren(...list.map((r) => el('tr', {},
    keys.map((k) => {
      const shown = text(k, r[k]);
      return el('td', {'data-key': k, 'data-value': r[k] ?? '',
        class: numeric(k) ? '' : 'name', title: numeric(k) ? '' : shown}, shown);
    }))));
  let sorted = {key: null, down: false};
  const head = el('tr', {}, keys.map((k) => el('th', {class: 'sortable' +
    (numeric(k) ? '' : ' name'), title: `sort by ${k}`, onclick: () => {
    sorted = {key: k, down: sorted.key === k ? !sorted.down : true};
    const cmp = (a, b) => (numeric(k) ? a[k] - b[k] :
      text(k, a[k]).localeCompare(text(k, b[k])));
    fill([...rows].sort((a, b) => (sorted.down ? cmp(b, a) : cmp(a, b))));
  }}, k)));
  fill(rows);
  return el('table', {id, class: 'plain'}, el('thead', {}, head), tbody);
}

// How the steps table's columns read (the command line's units).
function stepFormats(steps) {
  const f = {};
  for (const k of Object.keys(steps[0] || {})) {
    if (k.endsWith('_micros')) f[k] = (v) => formatTime(Math.round(v));
    else if (k.endsWith('_bytes')) f[k] = (v) => (v < 0 ? 'n/a' : formatBytes(v));
    else if (k === 'flops') f[k] = (v) => formatFlops(v, 'FLOP');
    else if (k === 'mfu') f[k] = formatMfu;
  }
  return f;
}

async function renderSteps(hp, content) {
  const s = await api('/api/steps');
  setCommand(`tfprof ${info.input_flags} steps -output json`);
  content.append(el('h2', {}, `Time per step (${s.wall_source})`));
  content.append(stepsChart(s.steps));
  content.append(el('h2', {}, 'Steps'),
    objectTable(s.steps, 'steps-table', stepFormats(s.steps)));
}

// ------------------------------------------------------------ overview

// Where the steps' time went, summed over the steps: the parts' shares of
// the wall time, and GPU utilization (accelerator busy over wall).
function stepTotals(steps) {
  const sum = (k) => steps.reduce((a, s) => a + (Number(s[k]) || 0), 0);
  const wall = sum('wall_micros');
  return {wall, busy: sum('accelerator_micros'),
    parts: stepParts(steps).map((p) => ({...p, micros: sum(p.key),
      wholeMicros: p.whole ? sum(p.whole) : undefined}))};
}

// One line: how idle the accelerator is and the advisor's largest finding.
function diagnosis(totals, advice) {
  const idle = totals.parts.find((p) => p.key === 'idle_micros');
  const out = [];
  if (idle && totals.wall > 0) {
    out.push(`GPU idle ${percentText(idle.micros, totals.wall)} of the step time`);
  }
  const gaps = advice.checkers.find((c) => c.name === 'AcceleratorIdleChecker');
  const largest = gaps && gaps.reports.find((r) => r.startsWith('largest gaps:'));
  if (largest) {
    const first = largest.split('\n')[1] || '';
    const m = /^\s*(\S+) on .*?, step (\S+) at (\S+): on the host meanwhile: ([^,(]+)/.exec(first);
    if (m) out.push(`largest gap ${m[1]} (step ${m[2]} at ${m[3]}) during ${m[4].trim()}`);
  }
  return out.join('; ');
}

function overviewCards(s, steps) {
  const totals = stepTotals(steps);
  const w = s.time_per_step.wall_micros;
  const card = (label, id, text, value, title) => el('div', {class: 'card', title},
    label, el('div', {class: 'big', id, 'data-value': value ?? ''}, text));
  const cards = [
    card(`wall time per step (median, ${s.time_per_step.source})`, 'median-wall',
      formatTime(Math.round(w.median)), w.median),
    card('steps', 'steps-count', String(s.steps), s.steps),
  ];
  if (totals.busy > 0) {
    cards.push(card('GPU utilization (busy / wall, all steps)', 'gpu-utilization',
      percentText(totals.busy, totals.wall), totals.busy / totals.wall));
  }
  const each = (us) => formatTime(Math.round(us / steps.length));
  for (const p of totals.parts) {
    cards.push(p.whole ?
      card(`${p.label} per step (exposed: share of wall)`, `part-${p.label}`,
        `${each(p.wholeMicros)} (exposed ${each(p.micros)}: ` +
        `${percentText(p.micros, totals.wall)})`, p.wholeMicros / steps.length) :
      card(`${p.label} per step (share of wall)`, `part-${p.label}`,
        `${each(p.micros)} (${percentText(p.micros, totals.wall)})`,
        p.micros / steps.length));
  }
  if (s.flops_per_step > 0) {
    cards.push(card(`float ops per step (${s.flops_set})`, 'flops-per-step',
      formatFlops(s.flops_per_step, 'FLOP'), s.flops_per_step));
    cards.push(card('achieved over the step wall time', 'flop-rate',
      formatFlops(s.flop_rate, 'FLOP/s'), s.flop_rate));
    const mfu = card(s.peak_flops ? `MFU of ${formatFlops(s.peak_flops, 'FLOP/s')} (${s.peak_dtype})` :
      'MFU', 'mfu', formatMfu(s.mfu), s.mfu, s.mfu_text);
    mfu.append(el('div', {class: 'notes', id: 'mfu-text'}, s.mfu_text));
    cards.push(mfu);
  }
  return {box: el('div', {class: 'cards', id: 'summary-cards'}, cards), totals};
}

// The top rows of a flat view by one time attribute, with the share of the
// view's total.
async function topTable(view, attr, title) {
  const q = new URLSearchParams({view, order_by: attr, select: `${attr},occurrence`,
    levels: '1', limit: '10', max_depth: '10'});
  const res = await api('/api/view', q);
  const rows = (res.node.children || []).filter((r) => r[attr] && r[attr].self > 0);
  if (!rows.length) return [];
  const whole = res.node[attr].total;
  const id = `top-${view}${attr === 'micros' ? '' : '-' + attr.replace('_micros', '')}`;
  return [el('h2', {}, title), objectTable(rows.map((r) => ({name: r.name,
    time: r[attr].self, '%': whole > 0 ? 100 * r[attr].self / whole : 0,
    runs: r.occurrence ? r.occurrence.run : 0})), id,
  {time: (v) => formatTime(v), '%': (v) => `${v.toFixed(1)}%`})];
}

async function renderOverview(hp, content) {
  const [s, steps, advice] = await Promise.all([api('/api/summary'),
    api('/api/steps'), api('/api/advise')]);
  setCommand(`tfprof ${info.input_flags} summary -output json`);
  const {box, totals} = overviewCards(s, steps.steps);
  const line = diagnosis(totals, advice);
  if (line) content.append(el('p', {class: 'diagnosis', id: 'diagnosis'}, line));
  content.append(box);
  if (steps.steps.length) {
    content.append(el('h2', {}, totals.parts.length ?
      'Time per step: where it goes' : 'Wall time per step'), stepsChart(steps.steps));
  }
  // -1: not recorded (a ProfileProto keeps no device timelines).
  // A device's busy time per step over the mean step wall time.
  const known = (f) => (v) => (v < 0 ? 'n/a' : f(v));
  const mean = s.time_per_step.wall_micros.mean;
  content.append(el('h2', {}, 'Devices'), objectTable(s.devices.map((d) => ({
    device: d.name, nodes: d.nodes, busy: d.busy_micros,
    'busy %': d.busy_micros >= 0 && mean > 0 ? 100 * d.busy_micros / mean : -1,
    peak_memory: d.peak_bytes, lanes: d.lanes.map((l) => l.name).join(', ')})),
  'devices-table', {busy: known((v) => formatTime(Math.round(v))),
    'busy %': known((v) => `${v.toFixed(1)}%`), peak_memory: known(formatBytes)}));
  const tops = info.has_kernels ?
    [['kernel', 'micros', 'Top kernels by accelerator time'],
      ['op', 'accelerator_micros', 'Top ops by accelerator time'],
      ['op', 'cpu_micros', 'Top ops by host time']] :
    [['op', 'micros', 'Top ops by time']];
  for (const t of await Promise.all(tops.map((t) => topTable(...t)))) content.append(...t);
  content.append(el('h2', {}, 'Advice'), adviceList(advice));
}
