'use strict';
// The web UI's diff tab (tfprof --http with a base run): the top changes
// across views, a view compared row by row with each row's verdict and
// interval, the cost shifts, and the steps tables compared. Loaded before
// app.js, whose helpers (el, api, format, objectTable, renderOptions, ...)
// it uses when the tab is drawn; app.js's router calls renderDiff().

// A change in percent as the command line prints it (C's "%+.1f%%" of
// 100 * delta / base): "new" when the base is 0, nothing when both are.
function percent(base, current) {
  if (base === 0) return current === 0 ? '' : 'new';
  const x = 100 * (current - base) / base;
  return `${x < 0 ? '-' : '+'}${fixed(Math.abs(x), 1)}%`;
}

// An amount per step for reading, rounded as the command line rounds it
// (halves away from zero), in the attribute's unit ("_ns": nanoseconds).
function amount(attr, v, signed) {
  const r = Math.sign(v) * Math.round(Math.abs(v));
  if (!attr.endsWith('_ns')) return format(attr, r, signed);
  return (r < 0 ? '-' : (signed && r > 0 ? '+' : '')) + formatNanos(Math.abs(r));
}

// The verdict as a badge, with the interval and what decides it.
function verdictCell(j, attr) {
  const td = el('td', {class: 'verdict', 'data-verdict': j.verdict});
  if (j.p_value === null) {
    td.append(el('span', {class: 'badge untested'}, j.verdict));
    td.title = 'not tested: too few steps';
    return td;
  }
  td.append(el('span', {class: `badge ${j.verdict}`}, j.verdict));
  const ci = `${amount(attr, j.ci_low, true)}..${amount(attr, j.ci_high, true)}/step`;
  td.append(' ', el('span', {class: 'ci', 'data-low': j.ci_low, 'data-high': j.ci_high}, ci));
  if (j.verdict !== 'unchanged') td.append(` q=${j.q_value.toPrecision(3)}`);
  if (j.verdict === 'inconclusive') {
    td.append(el('span', {class: 'more', 'data-more': j.more_steps_needed},
      `, ~${j.more_steps_needed}${j.more_steps_needed >= 1000 ? '+' : ''} more steps`));
  }
  return td;
}

function diffTable(d) {
  const attrs = NUMERIC.filter((a) => d.root[a] !== undefined);
  const tbody = el('tbody');
  const head = el('tr', {}, el('th', {class: 'name'}, 'name'), el('th', {}, 'in'));
  for (const a of attrs) {
    head.append(el('th', {}, `${a} base`), el('th', {}, `${a} current`),
      el('th', {}, `${a} change`), el('th', {}, '%'));
  }
  head.append(el('th', {}, `verdict (${d.attribute} per step)`), el('th', {}, 'shift'));
  const add = (n, depth, visible) => {
    const tr = el('tr', {'data-depth': depth, 'data-name': n.name,
      'data-verdict': n.verdict, class: n.significant ? 'sig' : ''});
    if (!visible) tr.hidden = true;
    const toggle = el('span', {class: 'toggle'}, n.children.length ?
      (depth < 1 ? '▾' : '▸') : '');
    tr.append(el('td', {class: 'name', style: `padding-left:${4 + depth * 14}px`},
      toggle, n.name), el('td', {}, n.in));
    for (const a of attrs) {
      const c = n[a];
      const cls = c.delta > 0 ? 'slower' : (c.delta < 0 ? 'faster' : '');
      tr.append(el('td', {'data-value': c.base}, format(a, c.base)),
        el('td', {'data-value': c.current}, format(a, c.current)),
        el('td', {class: cls, 'data-attr': a, 'data-value': c.delta},
          format(a, c.delta, true)),
        el('td', {class: `pct ${cls}`, 'data-attr': a, 'data-part': 'pct'},
          percent(c.base, c.current)));
    }
    tr.append(verdictCell(n, d.attribute),
      el('td', {class: 'shift'}, n.shift === undefined ? '' : `[${n.shift + 1}]`));
    tbody.append(tr);
    const rows = [];
    for (const c of n.children) rows.push(add(c, depth + 1, visible && depth < 1));
    toggle.addEventListener('click', () => {
      const open = toggle.textContent === '▸';
      toggle.textContent = open ? '▾' : '▸';
      const walk = (list, show) => list.forEach(([r, kids, t]) => {
        r.hidden = !show;
        walk(kids, show && t.textContent === '▾');
      });
      walk(rows, open);
    });
    return [tr, rows, toggle];
  };
  add(d.root, 0, true);
  return el('table', {id: 'diff-table'}, el('thead', {}, head), tbody);
}

// The cost shifts: rows that vanished (or fell) while others appeared (or
// grew) under one parent.
function shiftList(d) {
  const box = el('div', {id: 'diff-shifts'}, el('h2', {}, 'Cost shifts'));
  if (!d.shifts.length) {
    box.append(el('p', {class: 'notes'}, 'none'));
    return box;
  }
  const member = (m) => `${m.name} (${format(d.attribute, m.current - m.base, true)}${
    m.in === 'base' ? ', vanished' : m.in === 'current' ? ', new' : ''})`;
  const list = el('ol');
  d.shifts.forEach((s) => {
    list.append(el('li', {class: 'shift', 'data-parent': s.parent},
      el('b', {}, `under ${s.parent}: `),
      el('span', {class: 'removed'}, s.removed.map(member).join(', ')), ' replaced by ',
      el('span', {class: 'added'}, s.added.map(member).join(', ')),
      `; together ${format(d.attribute, s.base)} → ${format(d.attribute, s.current)}, ` +
      `${format(d.attribute, s.delta, true)} `,
      el('table', {class: 'inline'}, el('tr', {}, verdictCell(s, d.attribute)))));
  });
  box.append(list);
  return box;
}

// The largest clear changes across views, and the runs that changed.
function topPanel(top) {
  const box = el('div', {id: 'diff-top'}, el('h2', {}, 'Top changes (per step)'));
  const changes = el('table', {id: 'top-changes'}, el('thead', {}, el('tr', {},
    ...['where', 'name', 'base', 'current', 'change', 'verdict'].map((h) => el('th', {}, h)))));
  const body = el('tbody');
  for (const e of top.changes) {
    body.append(el('tr', {'data-where': e.where, 'data-name': e.name},
      el('td', {}, e.where), el('td', {class: 'name'}, e.name),
      el('td', {'data-value': e.base}, amount('micros', e.base)),
      el('td', {'data-value': e.current}, amount('micros', e.current)),
      el('td', {class: e.delta > 0 ? 'slower' : 'faster', 'data-value': e.delta},
        amount('micros', e.delta, true)),
      verdictCell(e, 'micros')));
  }
  changes.append(body);
  box.append(top.changes.length ? changes : el('p', {class: 'notes'}, 'no clear change'));
  if (top.launches.length) {
    box.append(el('h3', {}, 'Runs and launches per step that changed'),
      objectTable(top.launches.map((e) => ({where: e.where, name: e.name,
        base: e.base, current: e.current, change: e.delta})), 'top-launches'));
  }
  for (const n of top.notes) box.append(el('p', {class: 'notes'}, n));
  return box;
}

// The steps tables compared: each measure's medians, the change of its
// mean with its interval and the verdict.
function stepsDiffTable(res) {
  const head = el('tr', {}, ...['measure', 'base median', 'current median',
    'change (mean)', '%', 'verdict'].map((h) => el('th', {}, h)));
  const body = el('tbody');
  for (const m of res.measures) {
    const recorded = m.base.length > 0 && m.current.length > 0 && m.p_value !== null;
    body.append(el('tr', {'data-measure': m.measure, 'data-verdict': m.verdict},
      el('td', {}, m.measure.replace(/_ns$/, '')),
      el('td', {'data-value': m.base_median}, amount(m.measure, m.base_median)),
      el('td', {'data-value': m.current_median}, amount(m.measure, m.current_median)),
      el('td', {'data-value': m.current_mean - m.base_mean},
        amount(m.measure, m.current_mean - m.base_mean, true)),
      el('td', {class: 'pct'}, percent(m.base_median, m.current_median)),
      recorded ? verdictCell(m, m.measure) : el('td', {}, 'not tested')));
  }
  return el('table', {id: 'diff-steps'}, el('thead', {}, head), body);
}

async function renderDiff(hp, content) {
  if (!info.base_input_flags) {
    content.append(el('p', {id: 'no-base'}, 'No base run: start tfprof with ' +
      '--base_profile_path=FILE (or another --base_ input flag) to compare two runs.'));
    return;
  }
  const view = hp.get('diffview') || 'scope';
  const pick = el('select', {name: 'diffview', id: 'diff-view'},
    [...VIEWS, 'steps'].map((v) => el('option', {value: v}, v)));
  pick.value = view;
  const alpha = el('input', {name: 'alpha', value: hp.get('alpha') || '0.05'});
  const floor = el('input', {name: 'min_change', value: hp.get('min_change') || '2%,2us'});
  renderOptions(hp, [el('label', {}, 'compare', pick), el('label', {}, 'alpha', alpha),
    el('label', {title: 'the practical floor: a percentage of the base and amounts'},
      'min_change', floor)]);
  const q = optionParams(hp);
  for (const k of ['alpha', 'min_change']) {
    if (hp.get(k)) q.set(k, hp.get(k));
  }
  for (const m of hp.getAll('map')) q.append('map', m);
  content.append(el('p', {class: 'notes'}, `base: ${info.base_input_flags}`));
  const legend = (attr, d) => el('p', {class: 'notes'},
    `Changes in ${attr} per step: red slower/larger, green faster/smaller. ` +
    `Regressed or improved when beyond the floor (${d.min_change} of the base) at ` +
    `false discovery rate ${d.alpha}; unchanged when the ${100 * (1 - d.alpha)}% ` +
    'interval lies inside the floor; else inconclusive, with the steps a side ' +
    'that would likely decide it.');
  if (view === 'steps') {
    q.set('view', 'steps');
    const res = await api('/api/diff', q);
    setCommand(`tfprof ${info.input_flags} ${info.base_input_flags} diff steps -output json`);
    content.append(legend('each measure', res), stepsDiffTable(res));
    return;
  }
  q.set('view', 'top');
  const top = await api('/api/diff', q);
  q.set('view', view);
  const res = await api('/api/diff', q);
  setCommand(res.command);
  for (const n of res.notes) content.append(el('p', {class: 'notes'}, n));
  content.append(topPanel(top), el('h2', {}, `${view} view, largest change first`),
    legend(res.diff.attribute, res.diff), diffTable(res.diff), shiftList(res.diff));
}

