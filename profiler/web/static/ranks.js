'use strict';
// The web UI's ranks tab (an input of several ranks' traces, the command
// line's `ranks`): each rank's clock offset with its uncertainty, a rank x
// step heat map of wall or wait time, the job's steps and the stragglers
// with their causes. A click on a cell draws that step of every rank on the
// aligned clock (the drawing of the timeline tab), with a link to download
// it for Perfetto. Loaded before app.js, whose helpers it uses; app.js's
// router calls renderRanks().

// The heat map's measures (hash parameter metric=...).
const RANK_METRICS = [
  {key: 'wall_micros', label: 'wall'},
  {key: 'wait_micros', label: 'wait'},
];

// Microseconds as the ranks command prints them: 30.451ms, 981.082us, 0ns.
function rankTime(us) {
  const ns = Math.round(us * 1000);
  return (ns < 0 ? '-' : '') + formatNanos(Math.abs(ns));
}

// White to the accent's dark blue as `t` goes from 0 to 1.
function heatColor(t) {
  const c = (a, b) => Math.round(a + (b - a) * Math.min(1, Math.max(0, t)));
  return `rgb(${c(247, 33)},${c(251, 78)},${c(255, 150)})`;
}

// The offsets table: a row per rank, the raw micros in data-value.
function rankOffsets(report) {
  const rows = report.ranks.map((r) => el('tr', {'data-rank': r.rank},
    el('td', {'data-key': 'rank', 'data-value': r.rank}, String(r.rank)),
    el('td', {'data-key': 'offset_micros', 'data-value': r.offset_micros},
      r.alignment === 'reference' ? 'reference clock' : rankTime(r.offset_micros)),
    el('td', {'data-key': 'offset_uncertainty_micros',
      'data-value': r.offset_uncertainty_micros},
    r.alignment === 'reference' ? '' : `± ${rankTime(r.offset_uncertainty_micros)}`),
    el('td', {'data-key': 'alignment', class: 'name'},
      r.alignment === 'collectives' ? `collectives, ${r.matched} matched` : r.alignment),
    el('td', {'data-key': 'file', class: 'name', title: r.file}, r.file)));
  const head = el('tr', {}, ['rank', 'offset', 'uncertainty', 'from', 'file'].map((h, i) =>
    el('th', {class: i >= 3 ? 'name' : ''}, h)));
  return el('table', {id: 'ranks-offsets', class: 'plain'}, el('thead', {}, head),
    el('tbody', {}, rows));
}

// A cell per rank and step, shaded by the measure; hover lists the rank's
// step in the command line's units, a click opens the step.
function rankHeatMap(report, metric, chosen) {
  const steps = report.steps.map((s) => s.step);
  const values = report.ranks.flatMap((r) => r.steps.map((s) => s[metric.key]));
  const max = Math.max(0, ...values);
  const min = Math.min(max, ...values);
  const cw = Math.max(8, Math.min(72, 1000 / Math.max(1, steps.length)));
  const ch = Math.max(4, Math.min(24, 560 / Math.max(1, report.ranks.length)));
  const left = 70;
  const top = 18;
  const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
  const add = svgElement;
  svg.setAttribute('class', 'chart heatmap');
  svg.setAttribute('id', 'ranks-heatmap');
  svg.setAttribute('data-metric', metric.key);
  svg.setAttribute('width', left + steps.length * cw + 10);
  svg.setAttribute('height', top + report.ranks.length * ch + 6);
  const every = Math.ceil(steps.length / Math.max(1, Math.floor(steps.length * cw / 40)));
  steps.forEach((s, j) => {
    if (j % every === 0) add(svg, 'text', {x: left + j * cw + 2, y: 12}, `step ${s}`);
  });
  const labelEvery = Math.ceil(12 / ch);
  report.ranks.forEach((r, i) => {
    const y = top + i * ch;
    if (i % labelEvery === 0) add(svg, 'text', {x: 2, y: y + Math.min(ch, 14) - 2}, `rank ${r.rank}`);
    for (const s of r.steps) {
      const j = steps.indexOf(s.step);
      const v = s[metric.key];
      const t = max > min ? (v - min) / (max - min) : 0;
      const cell = add(svg, 'rect', {class: 'cell' + (chosen && chosen.rank === r.rank &&
        chosen.step === s.step ? ' chosen' : ''), x: left + j * cw, y, width: cw - 1,
      height: ch - 1, fill: heatColor(t), 'data-rank': r.rank, 'data-step': s.step,
      'data-value': v});
      add(cell, 'title', {}, [`rank ${r.rank}, step ${s.step}`,
        `wall ${rankTime(s.wall_micros)}`, `compute ${rankTime(s.compute_micros)}`,
        `communication ${rankTime(s.communication_micros)} ` +
          `(exposed ${rankTime(s.exposed_communication_micros)})`,
        `wait ${rankTime(s.wait_micros)}`, `idle ${rankTime(s.idle_micros)}`,
        'click: this step of every rank, aligned'].join('\n'));
      cell.addEventListener('click', () => {
        const next = hashParams();
        next.set('step', String(s.step));
        next.set('rank', String(r.rank));
        next.delete('window');
        next.delete('event');
        setHash(next);
      });
      if (cw >= 60 && ch >= 14) {
        add(svg, 'text', {x: left + j * cw + 3, y: y + ch - 6,
          class: t > 0.55 ? 'light' : ''}, rankTime(v));
      }
    }
  });
  return el('div', {class: 'chart-box'}, svg, el('div', {class: 'legend'},
    `${metric.label}: ${rankTime(min)} (white) to ${rankTime(max)} (dark)`));
}

// The stragglers: per step the rank that made the others wait, how long,
// and what it did meanwhile.
function stragglerTable(report) {
  return objectTable(report.stragglers.map((s) => ({step: s.step, rank: s.rank,
    delay: s.delay_micros, at: s.collective, cause: s.cause, 'cause time': s.cause_micros,
    'more than the others': s.cause_excess_micros})), 'ranks-stragglers',
  {delay: rankTime, 'cause time': rankTime, 'more than the others': rankTime});
}

function jobStepTable(report) {
  return objectTable(report.steps.map((s) => ({step: s.step, ranks: s.ranks,
    'min wall': s.min_wall_micros, 'max wall': s.max_wall_micros,
    spread: s.max_wall_micros - s.min_wall_micros, slowest: s.slowest_rank,
    'longest wait caused': s.max_delay_micros,
    by: s.delayed_by < 0 ? '' : `rank ${s.delayed_by}, ${s.collective}`})),
  'ranks-steps', {'min wall': rankTime, 'max wall': rankTime, spread: rankTime,
    'longest wait caused': rankTime});
}

// The chosen step of every rank on the aligned clock.
async function rankStepTimeline(box, step, rank, hp) {
  const t = await api('/api/ranks_timeline', new URLSearchParams({step: String(step)}));
  box.append(el('h2', {id: 'ranks-timeline-title'}, `Step ${t.step} of every rank, ` +
    `aligned (rank ${rank} chosen: its lanes are named "rank ${rank}: …")`));
  box.append(el('p', {class: 'notes'}, 'Command line: ',
    el('code', {}, `tfprof ${info.input_flags} ranks -output ` +
      `timeline:outfile=ranks_step${t.step}.json -step ${t.step}`)));
  renderTrace(box, t.trace, hp);
  const link = box.querySelector('#timeline-download');
  if (link) link.setAttribute('download', `ranks_step${t.step}.json`);
}

async function renderRanks(hp, content) {
  const report = await api('/api/ranks');
  setCommand(`tfprof ${info.input_flags} ranks -output json`);
  if (report.ranks.length < 2) {
    content.append(el('p', {id: 'ranks-one', class: 'diagnosis'},
      `This input has one rank: the ranks page compares several ranks of a job.`));
    for (const n of report.notes) content.append(el('p', {class: 'notes'}, n));
    return;
  }
  const metric = RANK_METRICS.find((m) => m.label === hp.get('metric')) || RANK_METRICS[0];
  content.append(el('p', {id: 'ranks-head'}, `${report.ranks.length} ranks` +
    `${report.backend ? ` (${report.backend})` : ''}, ${report.collectives_matched} ` +
    'collectives matched across ranks'));
  for (const n of report.notes) content.append(el('p', {class: 'notes ranks-note'}, n));
  content.append(el('h2', {}, 'Clock offsets (aligned time = the rank\'s clock - offset)'),
    rankOffsets(report));
  const toggle = el('span', {class: 'mode'});
  for (const m of RANK_METRICS) {
    const next = hashParams();
    next.set('metric', m.label);
    toggle.append(el('a', {href: '#' + next, id: `metric-${m.label}`,
      class: m === metric ? 'active' : ''}, m.label));
  }
  const chosen = hp.has('step') && hp.has('rank') ?
    {step: Number(hp.get('step')), rank: Number(hp.get('rank'))} : null;
  content.append(el('h2', {}, `${metric.label} time per rank and step `, toggle),
    rankHeatMap(report, metric, chosen));
  const box = el('div', {id: 'ranks-timeline'});
  content.append(box);
  content.append(el('h2', {}, `Stragglers (a delay of at least ${rankTime(report.straggler_floor_micros)})`),
    stragglerTable(report));
  content.append(el('h2', {}, 'Job steps'), jobStepTable(report));
  if (chosen) await rankStepTimeline(box, chosen.step, chosen.rank, hp);
  else box.append(el('p', {class: 'notes'}, 'Click a cell for that step of every rank, aligned.'));
}
