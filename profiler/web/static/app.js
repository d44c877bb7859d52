'use strict';
// tfprof's web UI. The page's state is the URL's hash
// (#tab=scope&max_depth=4&order_by=micros...), so a view can be bookmarked
// and shared; its data comes from the JSON API under /api/ (the same
// numbers as the command line's -output json). No third-party code.

const VIEWS = ['scope', 'graph', 'op', 'code', 'kernel'];
const FLAME_VIEWS = ['scope', 'code', 'kernel'];
const TABS = ['overview', ...VIEWS, 'steps', 'timeline', 'memory', 'ranks', 'advise', 'diff'];
// Old names of tabs, still understood in links.
const TAB_ALIASES = {summary: 'overview'};
// Numeric attributes as the API names them, in tfprof's column order.
const NUMERIC = ['micros', 'accelerator_micros', 'cpu_micros', 'bytes',
  'peak_bytes', 'residual_bytes', 'output_bytes', 'params', 'float_ops'];
// Options shown first; the others are under "More options".
const MAIN_OPTIONS = ['max_depth', 'step', 'order_by', 'select',
  'account_type_regexes', 'show_name_regexes', 'hide_name_regexes',
  'min_micros'];
// Hash parameters that are not view options.
const PAGE_PARAMS = ['tab', 'mode', 'zoom', 'diffview', 'map', 'alpha',
  'min_change', 'significant_only', 'checker', 'window', 'event', 'metric', 'rank'];
const PAGE_ROWS = 200;
// The kernel view's own facts, after the time columns.
const KERNEL_COLUMNS = ['launches', 'min', 'avg', 'max', 'streams', 'launched by'];
// A flame graph asks only for subtrees of at least this share of the root
// (narrower ones would be under half a pixel on a 2,500-pixel screen), so
// a large profile's graph stays small.
const FLAME_MIN_SHARE = 1 / 5000;

let info = null;  // /api/info

// ---------------------------------------------------------------- helpers

// A new SVG element `tag` with `attrs` (and text) appended to `parent`
// (charts of the overview, memory and ranks pages).
function svgElement(parent, tag, attrs, text) {
  const e = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  parent.append(e);
  return e;
}

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === 'class') e.className = v;
    // CSSOM, which the page's Content-Security-Policy allows (a style
    // attribute it would refuse).
    else if (k === 'style') e.style.cssText = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else if (v !== undefined && v !== null) e.setAttribute(k, v);
  }
  for (const c of children.flat()) {
    if (c !== undefined && c !== null) {
      e.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
  }
  return e;
}

async function api(path, params) {
  const query = params ? '?' + params.toString() : '';
  const r = await fetch(path + query);
  const body = await r.json();
  if (!r.ok) throw new Error(body.error || r.statusText);
  return body;
}

function showError(message) {
  const e = document.getElementById('error');
  e.textContent = message || '';
  e.hidden = !message;
}

// v >= 0 with `digits` decimals as C's printf writes it: rounded on the
// double's exact value (as toFixed does, so 23.5815, stored a little
// below, is 23.581), and a value exactly halfway goes to the even digit
// (where toFixed goes up).
function fixed(v, digits) {
  const exact = v.toFixed(Math.min(100, digits + 80));
  const rest = exact.slice(exact.indexOf('.') + 1 + digits);
  if (!/^50*$/.test(rest)) return v.toFixed(digits);
  const kept = exact.slice(0, exact.indexOf('.') + 1 + digits).replace(/\.$/, '');
  const last = Number(kept[kept.length - 1]);
  return last % 2 === 0 ? kept : v.toFixed(digits);
}

// tfprof's units: 12us, 1.23ms, 1.23sec; 12B, 1.23KB, 1.23MB; 12, 1.23k.
function formatTime(us) {
  if (us < 1000) return `${us}us`;
  if (us < 1e6) return `${fixed(us / 1e3, 2)}ms`;
  return `${fixed(us / 1e6, 2)}sec`;
}
// Kernel durations, as the kernel view prints them: 950ns, 1.234us, 1.234ms.
function formatNanos(ns) {
  if (ns < 1000) return `${ns}ns`;
  if (ns < 1e6) return `${fixed(ns / 1e3, 3)}us`;
  if (ns < 1e9) return `${fixed(ns / 1e6, 3)}ms`;
  return `${fixed(ns / 1e9, 3)}sec`;
}
function formatBytes(b) {
  if (b < 1000) return `${b}B`;
  if (b < 1e6) return `${fixed(b / 1e3, 2)}KB`;
  return `${fixed(b / 1e6, 2)}MB`;
}
function formatCount(n) {
  if (n < 1000) return `${n}`;
  if (n < 1e6) return `${fixed(n / 1e3, 2)}k`;
  if (n < 1e9) return `${fixed(n / 1e6, 2)}m`;
  return `${fixed(n / 1e9, 2)}b`;
}
// Float ops and rates with SI prefixes, as the command line prints them:
// 1.555 TFLOP, 38.5 TFLOP/s.
function formatFlops(v, unit) {
  const prefixes = ['', 'k', 'M', 'G', 'T', 'P', 'E'];
  let i = 0;
  while (v >= 999.95 && i + 1 < prefixes.length) {
    v /= 1000;
    ++i;
  }
  return `${Number(v.toPrecision(4))} ${prefixes[i]}${unit}`;
}
function formatMfu(mfu) {
  return mfu === null || mfu === undefined ? 'n/a' : `${(100 * mfu).toFixed(1)}%`;
}
function format(attr, v, signed) {
  if (v === null || v === undefined) return '';
  const sign = v < 0 ? '-' : (signed && v > 0 ? '+' : '');
  const m = Math.abs(v);
  if (attr.endsWith('micros')) return sign + formatTime(m);
  if (attr.endsWith('bytes')) return sign + formatBytes(m);
  return sign + formatCount(m);
}

function hashParams() {
  return new URLSearchParams(location.hash.replace(/^#/, ''));
}
function setHash(params) {
  location.hash = params.toString();
}

// The view options of the hash, for /api/view and /api/diff.
function optionParams(hp) {
  const q = new URLSearchParams();
  for (const [k, v] of hp) {
    if (!PAGE_PARAMS.includes(k)) q.append(k, v);
  }
  return q;
}

function numericAttrs(node) {
  return NUMERIC.filter((a) => node && node[a] !== undefined);
}

// ------------------------------------------------------------ page frame

// The tabs; a view tab's link keeps the view options now in the hash.
function renderTabs(active, current) {
  const nav = document.getElementById('tabs');
  nav.replaceChildren();
  for (const t of TABS) {
    if (t === 'code' && !info.has_code) continue;
    if (t === 'kernel' && !info.has_kernels) continue;
    if (t === 'timeline' && !info.has_timeline) continue;
    if (t === 'memory' && !info.has_memory) continue;
    const hp = VIEWS.includes(t) ? optionParams(current) : new URLSearchParams();
    hp.set('tab', t);
    // The ranks tab of a one-rank input says so when opened.
    const title = t === 'ranks' ? `${info.ranks} rank${info.ranks === 1 ? '' : 's'}` : undefined;
    nav.append(el('a', {href: '#' + hp, id: 'tab-' + t, title,
      class: t === active ? 'active' : ''}, t));
  }
}

// The options form: every option of /api/info, current values from the
// hash, else the server's defaults.
function renderOptions(hp, extra) {
  const form = document.getElementById('options');
  form.replaceChildren();
  const more = el('div');
  const field = (o) => {
    const value = hp.get(o.name) ?? o.value;
    let input;
    if (o.name === 'order_by') {
      const orders = hp.get('tab') === 'kernel' ? info.kernel_order_by : info.order_by;
      input = el('select', {name: o.name},
        orders.map((v) => el('option', {value: v}, v)));
      input.value = value;
    } else if (o.name === 'step' && info.steps.length) {
      input = el('select', {name: o.name}, el('option', {value: '-1'}, 'all'),
        info.steps.map((s) => el('option', {value: String(s)}, String(s))));
      input.value = value;
    } else {
      input = el('input', {name: o.name, value,
        class: o.name.endsWith('regexes') || o.name === 'select' ? 'wide' : ''});
    }
    return el('label', {title: o.help}, o.name, input);
  };
  for (const e of extra || []) form.append(e);
  for (const o of info.options) {
    if (MAIN_OPTIONS.includes(o.name)) form.append(field(o));
    else more.append(field(o));
  }
  form.append(el('button', {type: 'submit', id: 'apply'}, 'Apply'));
  form.append(el('details', {}, el('summary', {}, 'More options'), more));
  form.onsubmit = (ev) => {
    ev.preventDefault();
    const next = new URLSearchParams();
    for (const k of PAGE_PARAMS) {
      if (hp.has(k) && k !== 'zoom') next.set(k, hp.get(k));
    }
    for (const input of form.querySelectorAll('input, select')) {
      const o = info.options.find((x) => x.name === input.name);
      if (o && input.value !== o.value) next.set(input.name, input.value);
      else if (!o && input.name) next.set(input.name, input.value);
    }
    setHash(next);
  };
}

function setCommand(text) {
  document.getElementById('command').textContent = text || '';
}

// --------------------------------------------------------- the tree table

// A view as an expandable table; children load on expand, a page at a time.
class TreeTable {
  constructor(view, query, attrs) {
    this.view = view;
    this.query = query;
    this.attrs = attrs;
    this.flat = view === 'op' || view === 'kernel';
    this.tbody = el('tbody');
  }

  async fetchChildren(id, offset) {
    const q = new URLSearchParams(this.query);
    q.set('node', id);
    q.set('levels', '1');
    q.set('offset', offset);
    q.set('limit', PAGE_ROWS);
    return (await api('/api/view', q)).node;
  }

  header() {
    const order = this.query.get('order_by') || '';
    const row = el('tr', {}, el('th', {class: 'name'}, 'name'));
    for (const a of this.attrs) {
      for (const part of this.parts()) {
        const sortable = info.order_by.includes(a);
        const th = el('th', {class: sortable ? 'sortable' : '',
          title: sortable ? `order by ${a}` : ''},
          `${a} (${part})${order === a && part === this.parts().at(-1) ? ' ▼' : ''}`);
        if (sortable) th.addEventListener('click', () => this.sortBy(a));
        row.append(th);
      }
    }
    if (this.share) {
      const what = `of all ${this.share.attr} (total ${format(this.share.attr, this.share.whole)})`;
      row.append(el('th', {title: `share ${what}`}, '%'));
      row.append(el('th', {title: `cumulative share ${what}, down the list`}, 'cum %'));
    }
    if (this.hasRuns) row.append(el('th', {}, 'runs'));
    if (this.hasRate) {
      row.append(el('th', {title: 'float ops per second of accelerator time'},
        'FLOP/s'));
    }
    if (this.view === 'kernel') {
      for (const k of KERNEL_COLUMNS) row.append(el('th', {}, k));
    }
    return el('thead', {}, row);
  }

  // A kernel row's total is its own time (kernels do not nest): one column.
  parts() {
    return this.view === 'kernel' ? ['self'] : ['self', 'total'];
  }

  sortBy(attr) {
    const hp = hashParams();
    hp.set('order_by', attr);
    setHash(hp);
  }

  row(node, depth) {
    const open = node.child_count > 0;
    const toggle = el('span', {class: 'toggle'}, open ? '▸' : '');
    const name = el('td', {class: 'name' + (node.accounted ? '' : ' unaccounted'),
      style: `padding-left:${4 + depth * 14}px`, title: node.name},
      toggle, node.name);
    const tr = el('tr', {'data-id': node.id, 'data-depth': depth,
      'data-name': node.name}, name);
    for (const a of this.attrs) {
      const v = node[a] || {self: 0, total: 0};
      tr.append(el('td', {'data-attr': a, 'data-part': 'self',
        'data-value': v.self}, node.accounted ? format(a, v.self) : '--'));
      if (this.view !== 'kernel') {
        tr.append(el('td', {'data-attr': a, 'data-part': 'total',
          'data-value': v.total}, format(a, v.total)));
      }
    }
    if (this.share) {
      const v = node[this.share.attr] ? node[this.share.attr].self : 0;
      this.share.sum += v;
      const pct = (x) => (this.share.whole > 0 ? 100 * x / this.share.whole : 0);
      tr.append(el('td', {'data-attr': 'pct', 'data-value': pct(v)}, `${pct(v).toFixed(1)}%`));
      tr.append(el('td', {'data-attr': 'cum_pct', 'data-value': pct(this.share.sum)},
        `${pct(this.share.sum).toFixed(1)}%`));
    }
    if (this.hasRuns) {
      const runs = node.occurrence ? node.occurrence.run : '';
      tr.append(el('td', {'data-attr': 'runs', 'data-value': runs}, runs));
    }
    if (this.hasRate) {
      const rate = node.accelerator_flop_rate;
      const known = rate !== null && rate !== undefined;
      tr.append(el('td', {'data-attr': 'accelerator_flop_rate',
        'data-value': known ? rate : ''}, known ? formatFlops(rate, 'FLOP/s') : '--'));
    }
    if (this.view === 'kernel') {
      const k = node.kernel;
      const cells = k ? [k.launches, formatNanos(k.min_ns), formatNanos(k.avg_ns),
        formatNanos(k.max_ns), k.streams.join(' '),
        k.ops.flatMap((o, i) => [i ? ' ' : '', launcherLink(o.name)])] :
        KERNEL_COLUMNS.map(() => '');
      cells.forEach((c, i) => tr.append(el('td', {'data-attr': KERNEL_COLUMNS[i],
        class: i >= 4 ? 'name' : ''}, c)));
    }
    if (open) toggle.addEventListener('click', () => this.toggle(tr, node));
    return tr;
  }

  // Rows for children[offset..] after `after`, and a "more" row if needed.
  insertChildren(after, parent, children, depth, offset) {
    let last = after;
    for (const c of children) {
      const r = this.row(c, depth);
      last.after(r);
      last = r;
    }
    const shown = offset + children.length;
    if (shown < parent.child_count) {
      const more = el('tr', {'data-depth': depth, class: 'more-row'},
        el('td', {class: 'name more', colspan: 1 + this.parts().length * this.attrs.length +
          (this.hasRuns ? 1 : 0) + (this.hasRate ? 1 : 0) + (this.share ? 2 : 0) +
          (this.view === 'kernel' ? KERNEL_COLUMNS.length : 0), style: `padding-left:${4 + depth * 14}px`},
        `… ${parent.child_count - shown} more rows`));
      more.addEventListener('click', async () => {
        const page = await this.fetchChildren(parent.id, shown);
        this.insertChildren(more.previousSibling, parent, page.children,
          depth, shown);
        more.remove();
      });
      last.after(more);
    }
  }

  async toggle(tr, node) {
    const depth = Number(tr.dataset.depth);
    const toggle = tr.querySelector('.toggle');
    if (tr.dataset.open === '1') {
      let next = tr.nextSibling;
      while (next && Number(next.dataset.depth) > depth) {
        const n = next.nextSibling;
        next.remove();
        next = n;
      }
      tr.dataset.open = '0';
      toggle.textContent = '▸';
      return;
    }
    tr.dataset.open = '1';
    toggle.textContent = '▾';
    try {
      const full = await this.fetchChildren(node.id, 0);
      this.insertChildren(tr, full, full.children, depth + 1, 0);
    } catch (e) {
      showError(e.message);
    }
  }

  async render(container) {
    const res = await api('/api/view', (() => {
      const q = new URLSearchParams(this.query);
      q.set('levels', '1');
      q.set('limit', PAGE_ROWS);
      return q;
    })());
    setCommand(res.command);
    const root = res.node;
    if (!this.attrs) this.attrs = numericAttrs(root);
    this.hasRuns = root.occurrence !== undefined ||
      (root.children || []).some((c) => c.occurrence !== undefined);
    this.hasRate = this.flat &&
      (root.children || []).some((c) => 'accelerator_flop_rate' in c);
    // A flat view's rows: each one's share of the whole, and the running sum
    // (in -order_by's attribute when it is one shown, else the first).
    const order = this.query.get('order_by');
    const shareAttr = this.attrs.includes(order) ? order : this.attrs[0];
    if (this.flat && shareAttr && root[shareAttr]) {
      this.share = {attr: shareAttr, whole: root[shareAttr].total, sum: 0};
      const noun = this.view === 'kernel' ? 'kernels' : 'op types';
      container.append(el('p', {class: 'notes', id: 'row-count',
        'data-count': root.child_count}, `${root.child_count} ${noun}, ordered by ` +
        `${order}; ${PAGE_ROWS} rows a page ("more rows" loads the next)`));
    }
    const table = el('table', {class: 'tree', id: 'view-table'}, this.header(),
      this.tbody);
    container.append(table);
    for (const n of res.notes) container.append(el('p', {class: 'notes'}, n));
    if (this.flat) {
      const anchor = el('tr', {'data-depth': 0, hidden: ''});
      this.tbody.append(anchor);
      this.insertChildren(anchor, root, root.children || [], 1, 0);
    } else {
      const tr = this.row(root, 0);
      tr.dataset.open = '1';
      tr.querySelector('.toggle').textContent = root.child_count ? '▾' : '';
      this.tbody.append(tr);
      this.insertChildren(tr, root, root.children || [], 1, 0);
    }
  }
}

// A kernel's launching op as a link to the scope view showing that op
// alone, with the kernels under it (-show_kernels).
function launcherLink(name) {
  const hp = new URLSearchParams({tab: 'scope', max_depth: '1000',
    show_name_regexes: name.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&'),
    show_kernels: 'true'});
  return el('a', {href: '#' + hp, class: 'launcher-link', title: `${name} in the scope view`},
    name);
}

// ------------------------------------------------------------ flame graph

function flameColor(name) {
  let h = 0;
  for (let i = 0; i < name.length; ++i) h = (h * 31 + name.charCodeAt(i)) | 0;
  const hue = 10 + Math.abs(h) % 45;
  return `hsl(${hue}, 80%, ${62 + Math.abs(h >> 8) % 15}%)`;
}

// An icicle: the root on top, each node as wide as its total, its children
// side by side beneath. Click zooms into a node (its ancestors stay on top,
// full width); hover shows self and total.
function renderFlame(container, tree, attr, hp) {
  const path = (hp.get('zoom') || '').split('/').filter((s) => s !== '')
    .map(Number);
  // The zoomed node: follow child indices from the root.
  const chain = [tree];
  for (const i of path) {
    const c = chain[chain.length - 1].children || [];
    if (i >= c.length) break;
    chain.push(c[i]);
  }
  const focus = chain[chain.length - 1];
  const width = container.clientWidth || 1000;
  const total = (n) => (n[attr] ? n[attr].total : 0);
  const frames = [];
  chain.forEach((n, depth) => frames.push({n, depth, x: 0, w: width,
    path: path.slice(0, depth)}));
  const lay = (n, depth, x, w, p) => {
    let cx = x;
    const t = total(n) || 1;
    (n.children || []).forEach((c, i) => {
      const cw = w * total(c) / t;
      if (cw >= 0.5) {
        frames.push({n: c, depth, x: cx, w: cw, path: p.concat(i)});
        lay(c, depth + 1, cx, cw, p.concat(i));
      }
      cx += cw;
    });
  };
  lay(focus, chain.length, 0, width, path.slice(0, chain.length - 1));
  const maxDepth = frames.reduce((m, f) => Math.max(m, f.depth), 0);
  const box = el('div', {class: 'flame', id: 'flame',
    style: `height:${(maxDepth + 1) * 18 + 2}px`});
  const rootTotal = total(tree) || 1;
  for (const f of frames) {
    const self = f.n[attr] ? f.n[attr].self : 0;
    const d = el('div', {class: 'frame', 'data-name': f.n.name,
      'data-total': total(f.n),
      style: `left:${f.x}px;top:${f.depth * 18}px;width:${Math.max(f.w, 1)}px;` +
        `background:${flameColor(f.n.name)}`}, f.w > 30 ? f.n.name : '');
    d.addEventListener('click', () => {
      const next = hashParams();
      next.set('zoom', f.path.join('/'));
      setHash(next);
    });
    d.addEventListener('mousemove', (ev) => tooltip(ev,
      `${f.n.name}\n${attr} total: ${format(attr, total(f.n))} ` +
      `(${(100 * total(f.n) / rootTotal).toFixed(1)}%)\n` +
      `${attr} self: ${format(attr, self)}`));
    d.addEventListener('mouseleave', () => tooltip(null));
    box.append(d);
  }
  container.append(el('p', {class: 'notes'},
    `Width: ${attr} (total). Click a frame to zoom in, the top frames to zoom out.`));
  container.append(box);
}

function tooltip(ev, text) {
  const t = document.getElementById('tooltip');
  if (!ev) {
    t.hidden = true;
    return;
  }
  t.textContent = text;
  t.hidden = false;
  t.style.left = `${ev.clientX + 12}px`;
  t.style.top = `${ev.clientY + 12}px`;
}

// ------------------------------------------------------------ view tabs

async function renderView(view, hp, content) {
  const mode = FLAME_VIEWS.includes(view) && hp.get('mode') === 'flame' ?
    'flame' : 'table';
  const toggle = el('span', {class: 'mode'});
  if (FLAME_VIEWS.includes(view)) {
    for (const m of ['table', 'flame']) {
      const next = hashParams();
      next.set('mode', m);
      next.delete('zoom');
      toggle.append(el('a', {href: '#' + next, id: 'mode-' + m,
        class: m === mode ? 'active' : ''}, m === 'table' ? 'Table ' : 'Flame graph'));
    }
  }
  // The op and kernel tables open ordered by time with every row (paged).
  if ((view === 'op' || view === 'kernel') && !hp.has('order_by')) hp.set('order_by', 'micros');
  // An order kept from another tab that kernels do not have (bytes, ...).
  if (view === 'kernel' && !info.kernel_order_by.includes(hp.get('order_by'))) {
    hp.set('order_by', 'micros');
  }
  if ((view === 'op' || view === 'kernel') && !hp.has('max_depth')) hp.set('max_depth', '1000000');
  renderOptions(hp, [toggle]);
  const query = optionParams(hp);
  query.set('view', view);
  // The op and kernel tables of a profile with float ops show each row's
  // FLOP/s on the accelerator.
  if (mode === 'table' && info.has_flops && (view === 'op' || view === 'kernel')) {
    const select = (query.get('select') ??
      info.options.find((o) => o.name === 'select').value).split(',');
    if (!select.includes('accelerator_flop_rate')) {
      select.push('accelerator_flop_rate');
      query.set('select', select.join(','));
    }
  }
  if (mode === 'table') {
    await new TreeTable(view, query).render(content);
    return;
  }
  const q = new URLSearchParams(query);
  q.set('levels', '1');
  q.set('limit', '1');
  const head = await api('/api/view', q);
  setCommand(head.command);
  query.set('levels', 'all');
  query.set('min_share', String(FLAME_MIN_SHARE));
  const tree = (await api('/api/view', query)).node;
  const order = hp.get('order_by') || '';
  const attrs = numericAttrs(tree);
  const attr = attrs.includes(order) ? order : (attrs[0] || 'micros');
  renderFlame(content, tree, attr, hp);
}

// ------------------------------------------------------------ advise

function adviceList(advice) {
  const box = el('div', {id: 'advice'});
  for (const c of advice.checkers) {
    box.append(el('h2', {}, c.name), el('p', {class: 'notes'}, c.help));
    box.append(c.reports.length ?
      el('ul', {class: 'reports'}, c.reports.map((r) => el('li', {}, r))) :
      el('p', {class: 'notes'}, 'no findings'));
  }
  for (const n of advice.notes) box.append(el('p', {class: 'notes'}, 'note: ' + n));
  return box;
}

async function renderAdvise(hp, content) {
  const all = hp.get('checker') === 'all';
  const next = hashParams();
  next.set('checker', all ? '' : 'all');
  content.append(el('a', {href: '#' + next, id: 'advise-all'},
    all ? 'the checkers that fit this input' : 'all checkers'));
  const q = new URLSearchParams();
  if (all) q.set('checker', 'all');
  setCommand(`tfprof ${info.input_flags} advise${all ? ' -checker all' : ''}`);
  content.append(adviceList(await api('/api/advise', q)));
}

// ------------------------------------------------------------ routing

async function route() {
  const hp = hashParams();
  const asked = TAB_ALIASES[hp.get('tab')] || hp.get('tab') || 'overview';
  const tab = TABS.includes(asked) ? asked : 'overview';
  renderTabs(tab, hp);
  const input = (info.input_flags.split(/[=\/]/).pop() || '').slice(0, 60);
  document.title = `${asked} · ${input} · tfprof`;
  showError(TABS.includes(asked) ? '' :
    `no tab '${asked}': the tabs are ${TABS.join(', ')}; showing the overview`);
  setCommand('');
  tooltip(null);
  const content = document.getElementById('content');
  content.replaceChildren();
  content.dataset.state = 'loading';
  const controls = document.getElementById('controls');
  controls.hidden = !(VIEWS.includes(tab) || tab === 'diff');
  document.getElementById('options').replaceChildren();
  try {
    if (VIEWS.includes(tab)) await renderView(tab, hp, content);
    else if (tab === 'steps') await renderSteps(hp, content);
    else if (tab === 'timeline') await renderTimeline(hp, content);
    else if (tab === 'memory') await renderMemory(hp, content);
    else if (tab === 'ranks') await renderRanks(hp, content);
    else if (tab === 'advise') await renderAdvise(hp, content);
    else if (tab === 'diff') await renderDiff(hp, content);
    else await renderOverview(hp, content);
  } catch (e) {
    showError(e.message);
  }
  content.dataset.state = 'ready';
  content.dataset.routed = String(Number(content.dataset.routed || 0) + 1);
}

async function main() {
  try {
    info = await api('/api/info');
  } catch (e) {
    showError(`cannot reach the tfprof server: ${e.message}`);
    return;
  }
  document.getElementById('inputs').textContent = info.input_flags;
  document.getElementById('inputs').title = info.input_flags;
  window.addEventListener('hashchange', route);
  await route();
}

main();
