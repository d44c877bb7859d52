'use strict';
// The web UI's memory tab (traces with allocation events): per allocator
// the bytes in use over the run with the peak marked, the peak's moment and
// step, and the allocations live then, largest first and summed by op (the
// command line's `memory`). Loaded before app.js, whose helpers it uses;
// app.js's router calls renderMemory().

// Bytes in use over time as a line, the peak as a dot.
function memoryChart(a, id) {
  const w = 900;
  const h = 140;
  const pts = a.series;
  const t0 = pts.length ? pts[0][0] : 0;
  const t1 = pts.length ? pts[pts.length - 1][0] : 1;
  const span = t1 > t0 ? t1 - t0 : 1;
  const max = Math.max(1, a.peak_bytes, ...pts.map((p) => p[1]));
  const x = (t) => 70 + (t - t0) / span * w;
  const y = (b) => 10 + h - h * b / max;
  const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
  const add = (tag, attrs, text) => svgElement(svg, tag, attrs, text);
  svg.setAttribute('class', 'chart memory-chart');
  svg.setAttribute('id', id);
  svg.setAttribute('width', w + 80);
  svg.setAttribute('height', h + 30);
  add('text', {x: 2, y: 14}, formatBytes(max));
  add('text', {x: 2, y: h + 10}, '0');
  add('text', {x: 70, y: h + 26}, `${formatTime(Math.round(t0))}`);
  add('text', {x: w - 10, y: h + 26}, `${formatTime(Math.round(t1))}`);
  // A step line: the level holds until the next event.
  let d = '';
  pts.forEach(([t, b], i) => {
    d += i ? ` H${x(t).toFixed(1)} V${y(b).toFixed(1)}` : `M${x(t).toFixed(1)} ${y(b).toFixed(1)}`;
  });
  add('path', {d, class: 'memory-line', 'data-points': pts.length});
  const dot = add('circle', {cx: x(a.peak_micros), cy: y(a.peak_bytes), r: 4,
    class: 'memory-peak', 'data-value': a.peak_bytes});
  const title = document.createElementNS(svg.namespaceURI, 'title');
  title.textContent = `peak ${formatBytes(a.peak_bytes)} at ${formatTime(Math.round(a.peak_micros))}`;
  dot.append(title);
  return svg;
}

// The live allocations summed by the op that made them.
function liveByOp(live) {
  const by = new Map();
  for (const l of live) {
    const k = l.op || '(outside any op)';
    const v = by.get(k) || {op: k, bytes: 0, blocks: 0};
    v.bytes += l.bytes;
    v.blocks += 1;
    by.set(k, v);
  }
  return [...by.values()].sort((a, b) => b.bytes - a.bytes);
}

async function renderMemory(hp, content) {
  const m = await api('/api/memory');
  setCommand(`tfprof ${info.input_flags} memory -top 50`);
  if (!m.allocators.length) {
    content.append(el('p', {class: 'notes'}, 'no allocator events in this profile'));
    return;
  }
  // As the command line writes times: +36.058ms.
  const at = (us) => `+${formatNanos(Math.round(us * 1000))}`;
  m.allocators.forEach((a, i) => {
    const box = el('section', {class: 'allocator', 'data-name': a.name});
    box.append(el('h2', {}, a.name));
    box.append(el('div', {class: 'cards'},
      el('div', {class: 'card'}, 'peak in use', el('div', {class: 'big peak',
        'data-value': a.peak_bytes}, formatBytes(a.peak_bytes))),
      el('div', {class: 'card'}, 'reached at', el('div', {class: 'big peak-at',
        'data-value': a.peak_micros}, at(a.peak_micros) +
        (a.peak_step >= 0 ? ` (step ${a.peak_step})` : ''))),
      el('div', {class: 'card'}, 'events', el('div', {class: 'big events',
        'data-value': a.events}, String(a.events))),
      el('div', {class: 'card', title: 'allocated before the trace and not freed ' +
        'in it, or without an address'}, 'live at the peak: traced / untraced',
      el('div', {class: 'big live'}, `${a.live_count} blocks, ${formatBytes(a.live_bytes)} / ` +
        `${formatBytes(a.untraced_bytes)}`))));
    box.append(memoryChart(a, `memory-chart-${i}`));
    if (a.live.length) {
      box.append(el('h2', {}, `Live at the peak, by op (of the ${a.live.length} largest)`),
        objectTable(liveByOp(a.live),
        `memory-ops-${i}`, {bytes: formatBytes}));
      box.append(el('h2', {}, `Largest allocations live at the peak (${a.live.length} ` +
        `of ${a.live_count})`), objectTable(a.live.map((l) => ({bytes: l.bytes,
        op: l.op || '(outside any op)', allocated: l.before_trace ? 'before the trace' :
          at(l.micros)})), `memory-live-${i}`, {bytes: formatBytes}));
    }
    content.append(box);
  });
}
