'use strict';
// The web UI's timeline tab in headless Chromium (required by
// web_ui_test.js, whose helpers it is handed): one step's events against
// the CLI's timeline of that step (lanes, rows, hover, click, axis, search,
// zoom and selection in the URL), the launch links of a trace's kernels,
// its memory counter tracks, a range of steps, and a GPU's annotation lane.

const fs = require('fs');
const path = require('path');

module.exports = ({open, check, expect, shot, routed, expectDir}) => {
async function testTimeline(page, step = 0, shotName = 'timeline.png') {
  const trace = expect('timeline.json');
  const events = (trace.traceEvents || trace).filter((e) => e.ph === 'X');
  const lanes = new Set(events.map((e) => `${e.pid}/${e.tid}`));
  await open(page, `tab=timeline&step=${step}`);
  const text = await page.textContent('#timeline-info');
  check(text.startsWith(`${events.length} events on ${lanes.size} lanes`),
    `timeline: ${events.length} events on ${lanes.size} lanes as in the CLI's timeline (${text})`);
  // Where the page should draw each event: lanes sorted by (pid, tid),
  // events that nest inside another on their lane one row further down.
  const laneKeys = [...lanes].map((k) => k.split('/').map(Number))
    .sort((a, b) => a[0] - b[0] || a[1] - b[1]).map((k) => k.join('/'));
  const row = new Map();
  let rowBase = 0;
  for (const k of laneKeys) {
    const list = events.filter((e) => `${e.pid}/${e.tid}` === k)
      .sort((a, b) => a.ts - b.ts || b.dur - a.dur);
    let depth = 0;
    const open = [];
    for (const e of list) {
      while (open.length && open[open.length - 1] <= e.ts) open.pop();
      row.set(e, rowBase + open.length);
      depth = Math.max(depth, open.length + 1);
      open.push(e.ts + e.dur);
    }
    rowBase += Math.max(depth, 1);
  }
  const t0 = events.reduce((m, e) => Math.min(m, e.ts), Infinity);
  const t1 = events.reduce((m, e) => Math.max(m, e.ts + (e.dur || 0)), -Infinity);
  // The longest event with no shorter event of its row near its middle.
  const near = (e, o) => o !== e && row.get(o) === row.get(e) && (o.dur || 0) <= (e.dur || 0) &&
    o.ts <= e.ts + e.dur / 2 + (t1 - t0) / 100 && o.ts + o.dur >= e.ts + e.dur / 2 - (t1 - t0) / 100;
  const e = events.filter((x) => x.dur > 0).sort((a, b) => b.dur - a.dur)
    .find((x) => !events.some((o) => near(x, o)));
  const box = await page.$eval('#timeline-canvas', (c) => ({w: c.width}));
  const x = 260 + ((e.ts + e.dur / 2) - t0) / (t1 - t0) * (box.w - 260);
  const y = 22 + row.get(e) * 18 + 9;  // under the 22-pixel axis
  await page.hover('#timeline-canvas', {position: {x, y}});
  const tip = await page.textContent('#tooltip');
  check(tip.includes(e.name) && tip.includes(`duration: ${e.dur.toFixed(3)}us`),
    `timeline: hovering shows the event at its recorded time (${e.name}, ${e.dur}us)`);
  // A click selects it: its details are the CLI's event (name, duration,
  // every arg).
  await page.click('#timeline-canvas', {position: {x, y}});
  const shown = await page.$$eval('#timeline-details tr', (rs) => Object.fromEntries(rs.map((r) =>
    [r.dataset.key, r.querySelector('td').textContent])));
  const args = Object.entries(e.args || {});
  check(shown.name === e.name && shown.duration === `${e.dur.toFixed(3)}us` &&
    args.every(([k, v]) => shown[`args.${k}`] === (typeof v === 'object' ? JSON.stringify(v) : String(v))),
  `timeline: clicking selects ${e.name}; the details show its duration and ${args.length} args as the CLI's`);
  // The axis: 1, 2 or 5 times a power of ten apart, inside the view.
  const axis = await page.$eval('#timeline-canvas', (c) => ({ticks: JSON.parse(c.dataset.ticks),
    view: JSON.parse(c.dataset.view)}));
  const tick = axis.ticks[1] - axis.ticks[0];
  const mant = tick / 10 ** Math.floor(Math.log10(tick) + 1e-9);
  check(axis.ticks.length >= 4 && [1, 2, 5].some((m) => Math.abs(mant - m) < 1e-6) &&
    axis.ticks.every((t, i) => t >= axis.view[0] && t <= axis.view[1] &&
      (i === 0 || Math.abs(t - axis.ticks[i - 1] - tick) < tick * 1e-6)) &&
    Math.abs(axis.view[1] - axis.view[0] - (t1 - t0)) < 1e-6,
  `timeline: ${axis.ticks.length} axis ticks ${tick}us apart over the step's span`);
  // Search: the count of events whose name has the text, as the CLI's.
  const word = e.name.slice(0, Math.max(3, Math.min(8, e.name.length)));
  await page.fill('#timeline-search', word);
  const count = await page.$eval('#timeline-search-count', (c) => Number(c.dataset.count));
  const want = events.filter((o) => (o.name || '').toLowerCase().includes(word.toLowerCase())).length;
  check(count === want && want > 0, `timeline: searching '${word}' finds ${count} events (CLI: ${want})`);
  await page.fill('#timeline-search', '');
  await shot(page, shotName);
  // Zoom and selection live in the URL: zoom in, and a fresh load of that
  // URL shows the same window with the same event selected.
  await page.mouse.move(300, 300);
  await page.hover('#timeline-canvas', {position: {x, y}});
  await page.mouse.wheel(0, -300);
  await page.waitForFunction(() => new URLSearchParams(location.hash.slice(1)).has('window') &&
    new URLSearchParams(location.hash.slice(1)).get('window') ===
    JSON.parse(document.getElementById('timeline-canvas').dataset.view).map((t) => t.toFixed(3)).join(','),
  null, {timeout: 5000}).catch(() => {});
  const saved = await page.evaluate(() => ({hash: location.hash.slice(1),
    view: JSON.parse(document.getElementById('timeline-canvas').dataset.view)}));
  await open(page, saved.hash);
  const again = await page.evaluate(() => ({
    view: JSON.parse(document.getElementById('timeline-canvas').dataset.view),
    name: (document.getElementById('timeline-details') || {dataset: {}}).dataset.name}));
  const hpSaved = new URLSearchParams(saved.hash);
  check(saved.view[1] - saved.view[0] < t1 - t0 && hpSaved.has('event') &&
    again.view.every((t, i) => Math.abs(t - saved.view[i]) < 0.002) && again.name === e.name,
  `timeline: the zoomed window (${hpSaved.get('window')}) and the selected event are in the URL and come back on load`);
  return {events, row, t0, t1, width: box.w};
}

// On a trace: a kernel's details name the host op that launched it (the
// run of its args.op node around the call its launch arrow starts from), a
// link that selects that op.
async function testLaunch(page, tl, step) {
  const {events, row, t0, t1, width} = tl;
  await open(page, `tab=timeline&step=${step}`);  // the whole step again
  const k = events.filter((e) => e.cat === 'Kernel' && e.args && e.args.op)
    .sort((a, b) => b.dur - a.dur)[0];
  const all = expect('timeline.json').traceEvents;
  const end = all.find((e) => e.ph === 'f' && e.cat === 'launch' && e.pid === k.pid &&
    e.tid === k.tid && e.ts === k.ts);
  const call = end && all.find((e) => e.ph === 's' && e.id === end.id);
  check(call, `timeline: the kernel ${k.name.slice(0, 40)}… has a launch arrow from its call`);
  const launcher = events.filter((e) => e.args && e.args.node === k.args.op &&
      e.pid === call.pid && e.tid === call.tid && e.ts <= call.ts && call.ts <= e.ts + e.dur)
    .reduce((m, e) => (!m || e.ts > m.ts ? e : m), null);
  const x = 260 + ((k.ts + k.dur / 2) - t0) / (t1 - t0) * (width - 260);
  await page.click('#timeline-canvas', {position: {x, y: 22 + row.get(k) * 18 + 9}});
  const sel = await page.$eval('#timeline-details', (d) => d.dataset.name);
  const by = await page.$eval('#timeline-details .launcher a', (a) => a.textContent);
  check(sel === k.name && launcher && by === `${launcher.name} @ ${(launcher.ts - t0).toFixed(3)}us`,
    `timeline: the kernel ${k.name.slice(0, 40)}… was launched by ${by}`);
  await page.click('#timeline-details .launcher a');
  const now = await page.$eval('#timeline-details', (d) => d.dataset.name);
  const kids = await page.$$eval('#timeline-details .launched a', (as) => as.map((a) => a.textContent));
  check(now === launcher.name && kids.includes(`${k.name} @ ${(k.ts - t0).toFixed(3)}us`),
    `timeline: the link selects ${launcher.name}, whose launches include the kernel (${now}; ${kids.length} launches)`);
}

async function testTraceTimeline(page) {
  const steps = JSON.parse(fs.readFileSync(path.join(expectDir, 'step.txt'), 'utf8'));
  const tl = await testTimeline(page, steps, 'trace_timeline.png');
  await testLaunch(page, tl, steps);
  await testCounters(page, tl, steps);
  await testRange(page, steps);
}

// The memory counter tracks: one per counter of the CLI's timeline, with
// its samples and largest value; hovering a track gives its value then.
async function testCounters(page, tl, step) {
  const {row, t0, t1, width} = tl;
  await open(page, `tab=timeline&step=${step}`);
  const want = new Map();
  for (const e of expect('timeline.json').traceEvents.filter((x) => x.ph === 'C')) {
    const c = want.get(e.name) || {samples: [], max: 0};
    c.samples.push([e.ts, e.args.bytes_in_use]);
    c.max = Math.max(c.max, e.args.bytes_in_use);
    want.set(e.name, c);
  }
  const got = await page.$eval('#timeline-canvas', (c) => JSON.parse(c.dataset.counters));
  check(want.size > 0 && got.length === want.size && got.every((c) => want.has(c.name) &&
    want.get(c.name).samples.length === c.samples && want.get(c.name).max === c.max),
  `timeline: ${got.length} memory counter track(s) with the CLI's samples and peaks (${
    got.map((c) => `${c.name}: ${c.samples} samples, peak ${c.max} B`).join('; ')})`);
  const rows = Math.max(...row.values()) + 1;
  const i = got.findIndex((c) => c.name === 'GPU_0');
  const px = 260 + (width - 260) * 0.5;
  const at = t0 + (t1 - t0) * 0.5;
  await page.hover('#timeline-canvas', {position: {x: px, y: 22 + (rows + 2 * i) * 18 + 18}});
  const tip = await page.textContent('#tooltip');
  const near = want.get('GPU_0').samples.filter(([t]) => t <= at + (t1 - t0) / 1000);
  const values = near.slice(-5).map(([, v]) => v);
  const shown = /GPU_0: .* in use/.test(tip);
  check(i >= 0 && shown && values.length > 0,
    `timeline: hovering the GPU_0 track mid-step gives its bytes in use (${tip.replace(/\n/g, ' ')}; ` +
    `CLI: ${values.slice(-1)[0]} B then)`);
}

// Two steps as a range: every event of both CLI timelines on one canvas;
// the range is in the URL and the step selects go back to one step.
async function testRange(page, step) {
  const two = expect('timeline2.json');
  const next = Number(JSON.parse(fs.readFileSync(path.join(expectDir, 'step2.txt'), 'utf8')));
  const n = (t) => t.traceEvents.filter((e) => e.ph === 'X').length;
  const want = n(expect('timeline.json')) + n(two);
  await open(page, `tab=timeline&steps=${step}-${next}`);
  const text = await page.textContent('#timeline-info');
  const to = await page.$eval('#timeline-last-step', (s) => s.value);
  const note = await page.textContent('#timeline-steps');
  check(text.startsWith(`${want} events on `) && to === String(next) &&
    note.startsWith(`Steps ${step} to ${next} on one clock`),
  `timeline: steps=${step}-${next} draws both steps' ${want} events on one clock (${text})`);
  await routed(page, () => page.selectOption('#timeline-last-step', String(step)));
  const hash = new URLSearchParams(await page.evaluate(() => location.hash.slice(1)));
  const one = await page.textContent('#timeline-info');
  check(hash.get('step') === String(step) && !hash.has('steps') &&
    one.startsWith(`${n(expect('timeline.json'))} events on `),
  `timeline: choosing the same last step goes back to step ${step} alone (${one})`);
}

// One DDP rank: the GPU's annotation lane (named "annotations", above the
// GPU's streams) has the CLI's annotation ranges; a click selects one.
async function testAnnotations(page) {
  const step = JSON.parse(fs.readFileSync(path.join(expectDir, 'step.txt'), 'utf8'));
  const tl = await testTimeline(page, step, 'timeline_annotations.png');
  const {events, row, t0, t1, width} = tl;
  const ann = events.filter((e) => e.cat === 'Annotation');
  const got = await page.$eval('#timeline-canvas', (c) => ({n: Number(c.dataset.annotations),
    lanes: JSON.parse(c.dataset.lanes)}));
  const lane = got.lanes.findIndex((l) => l.endsWith('/ annotations'));
  const stream = got.lanes.findIndex((l) => /\/ stream:/.test(l));
  check(ann.length > 0 && got.n === ann.length && lane >= 0 && stream === lane + 1 &&
    got.lanes[lane].split(' / ')[0] === got.lanes[stream].split(' / ')[0],
  `timeline: ${got.n} GPU annotation ranges (CLI: ${ann.length}) on the lane "${got.lanes[lane]}", ` +
    `right above ${got.lanes[stream]}`);
  await open(page, `tab=timeline&step=${step}`);
  const a = ann.sort((p, q) => q.dur - p.dur)[0];
  const x = 260 + (a.ts + a.dur / 2 - t0) / (t1 - t0) * (width - 260);
  await page.click('#timeline-canvas', {position: {x, y: 22 + row.get(a) * 18 + 9}});
  const shown = await page.$$eval('#timeline-details tr', (rs) => Object.fromEntries(rs.map((r) =>
    [r.dataset.key, r.querySelector('td').textContent])));
  check(shown.name === a.name && shown.category === 'Annotation' &&
    shown.duration === `${a.dur.toFixed(3)}us`,
  `timeline: clicking the annotation lane selects ${a.name} (${shown.duration}, as the CLI's)`);
}

return {testTimeline, testTraceTimeline, testAnnotations};
};
