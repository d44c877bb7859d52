#!/usr/bin/env node
// Drives tfprof's web UI (tfprof --http) in Debian's headless Chromium via
// playwright-core, and checks what the page shows against the command
// line's own output for the same queries (files written by web_ui_test.sh).
//
// Usage: node web_ui_test.js [--trace|--diff] URL EXPECT_DIR [SCREENSHOT_DIR]
//   URL         the server's page (http://127.0.0.1:PORT/), started with a
//               base run (--base_profile_path)
//   EXPECT_DIR  scope.json, scope_bytes.json, op.json, steps.json,
//               diff.json (CLI -output json of the same queries) and
//               timeline.json (the CLI's timeline of step 0)
//   --trace     the server has a PyTorch trace instead: EXPECT_DIR has
//               kernel.json (kernel -output json), timeline.json (the
//               CLI's `timeline` of the first step), summary.json (summary
//               -output json), op_rate.json and kernel_rate.json (op and
//               kernel -select micros,accelerator_flop_rate); checks the
//               kernel view, its flame graph, the summary's MFU and FLOP/s,
//               the tables' FLOP/s column and the trace's own timeline
//               (with timeline2.json, the next step's: its memory counter
//               tracks and the two steps as a range)
//   --memory    the server has a JAX XSpace: EXPECT_DIR has memory.txt
//               (memory -top 50) and memory.csv (memory -output csv);
//               checks the memory tab against them
//   --timings   the server has a many-step trace (bench/gen_kineto.py):
//               EXPECT_DIR has steps.csv; opens every tab, prints how long
//               each took to draw, and checks a bar per step
//   --ranks     the server has two ranks' traces (testdata/ranks/ddp-gloo):
//               EXPECT_DIR has ranks.json and ranks.txt (ranks -output
//               json, and text), ranks_timeline3.json (ranks -step 3
//               -output timeline) and steps.csv; checks the ranks tab and
//               the overview's communication
//   --annotations one DDP rank's trace: EXPECT_DIR has step.txt and
//               timeline.json (the CLI's timeline of that step); checks the
//               GPU annotation lane against it
//   --overview  a trace from ../shared/corpus: EXPECT_DIR has steps.csv,
//               summary.json, kernel.json and op_{accelerator,cpu}_micros
//               .json; checks the overview and times every tab
//   --diff      the server has a PyTorch trace and a base run of it with
//               some kernels slower or renamed: EXPECT_DIR has the CLI's
//               diff op/kernel (-output json and text), diff steps (json
//               and text) and diff top (json); checks the diff page's
//               rows, change, %, verdicts, intervals, shifts, top changes
//               and steps comparison against them
// Every check prints "ok: ..." or "FAIL: ..."; the last line counts them.
// Fails on any console error or page error, and on any request that leaves
// the server's origin.
'use strict';

const fs = require('fs');
const path = require('path');

const args = process.argv.slice(2);
const traceMode = args[0] === '--trace';
const diffMode = args[0] === '--diff';
const memoryMode = args[0] === '--memory';
const timingsMode = args[0] === '--timings';
const overviewMode = args[0] === '--overview';
const ranksMode = args[0] === '--ranks';
const annotationsMode = args[0] === '--annotations';
const [url, expectDir, shotDir] = traceMode || diffMode || memoryMode || timingsMode ||
  overviewMode || ranksMode || annotationsMode ?
  args.slice(1) : args;
const expect = (f) => JSON.parse(fs.readFileSync(path.join(expectDir, f), 'utf8'));
let passed = 0;
let failed = 0;
function check(ok, what) {
  if (ok) {
    passed++;
    console.log(`ok: ${what}`);
  } else {
    failed++;
    console.log(`FAIL: ${what}`);
  }
}

let loads = 0;
// A fresh load of the page at `hash` (a query string makes it a new
// document, not a same-page hash change), waiting until it is drawn.
// Prints how long the page took to draw (a timing to read, not a test).
async function open(page, hash) {
  const start = Date.now();
  await page.goto(`${url}?load=${++loads}#${hash}`);
  await page.waitForSelector('#content[data-state="ready"]', {timeout: 30000});
  console.log(`time: #${hash} drew in ${Date.now() - start} ms`);
  const err = await page.$eval('#error', (e) => (e.hidden ? '' : e.textContent));
  check(err === '', `#${hash} loads without an error${err ? ': ' + err : ''}`);
}

async function shot(page, name, fullPage = false) {
  if (!shotDir) return;
  fs.mkdirSync(shotDir, {recursive: true});
  await page.screenshot({path: path.join(shotDir, name), fullPage});
}

// Runs an action that changes the page's hash and waits until the page has
// drawn the new state (content.dataset.routed counts finished routes).
async function routed(page, action) {
  const before = await page.evaluate(() => Number(document.getElementById('content').dataset.routed || 0));
  await action();
  await page.waitForFunction((n) => {
    const c = document.getElementById('content');
    return Number(c.dataset.routed || 0) > n && c.dataset.state === 'ready';
  }, before, {timeout: 30000});
}

// The visible rows of the tree table: name, depth and data values.
async function tableRows(page) {
  return page.$$eval('#view-table tbody tr:not([hidden])', (rows) => rows
    .filter((r) => r.dataset.name !== undefined)
    .map((r) => {
      const v = {name: r.dataset.name, depth: Number(r.dataset.depth)};
      for (const td of r.querySelectorAll('td[data-attr]')) {
        v[`${td.dataset.attr}.${td.dataset.part || ''}`] = Number(td.dataset.value);
        v[`${td.dataset.attr}.${td.dataset.part || ''}.text`] = td.textContent;
      }
      return v;
    }));
}

// tfprof's text units, as the CLI prints them (for the shown text).
// The timeline tab's checks (web_ui_timeline.js), with this file's helpers.
const {testTimeline, testTraceTimeline, testAnnotations} = require('./web_ui_timeline.js')(
  {open, check, expect, shot, routed, expectDir});

function formatTime(us) {
  if (us < 1000) return `${us}us`;
  if (us < 1e6) return `${(us / 1e3).toFixed(2)}ms`;
  return `${(us / 1e6).toFixed(2)}sec`;
}

// A share as the page writes it: one decimal and '%'.
function pct(part, whole) {
  return `${(whole > 0 ? 100 * part / whole : 0).toFixed(1)}%`;
}

// One CSV line's fields (RFC 4180 quotes: "a,b" and "" inside them).
function csvFields(line) {
  const out = [];
  let cur = '';
  let quoted = false;
  for (let i = 0; i < line.length; ++i) {
    const c = line[i];
    if (quoted) {
      if (c === '"' && line[i + 1] === '"') {
        cur += '"';
        ++i;
      } else if (c === '"') {
        quoted = false;
      } else {
        cur += c;
      }
    } else if (c === '"') {
      quoted = true;
    } else if (c === ',') {
      out.push(cur);
      cur = '';
    } else {
      cur += c;
    }
  }
  out.push(cur);
  return out;
}

// A CLI CSV (steps, memory) as rows of numbers (and text where not a number).
function readCsv(file) {
  const [head, ...lines] = fs.readFileSync(path.join(expectDir, file), 'utf8')
    .trim().split('\n');
  const keys = csvFields(head);
  return lines.map((l) => Object.fromEntries(csvFields(l).map((v, i) =>
    [keys[i], v !== '' && !Number.isNaN(Number(v)) ? Number(v) : v])));
}

function sameNode(row, node, attrs, where) {
  let ok = row && row.name === node.name;
  for (const a of attrs) {
    ok = ok && row[`${a}.total`] === node[a].total &&
      (!node.accounted || row[`${a}.self`] === node[a].self);
  }
  if (!ok) {
    console.log(`  ${where}: page ${JSON.stringify(row)}\n  cli ${JSON.stringify(
      {name: node.name, ...Object.fromEntries(attrs.map((a) => [a, node[a]]))})}`);
  }
  return ok;
}

async function testScope(page) {
  const cli = expect('scope.json').root;
  await open(page, 'tab=scope&max_depth=3&select=micros,bytes&order_by=micros');
  let rows = await tableRows(page);
  check(rows.length === 1 + cli.children.length,
    `scope: root and ${cli.children.length} first-level rows shown (${rows.length})`);
  check(sameNode(rows[0], cli, ['micros', 'bytes'], 'root'), 'scope: the root row equals the CLI\'s');
  check(cli.children.every((c, i) => sameNode(rows[1 + i], c, ['micros', 'bytes'], c.name)),
    'scope: every first-level row equals the CLI\'s (name, order, self and total micros and bytes)');
  check(rows[0]['micros.total.text'] === formatTime(cli.micros.total),
    `scope: the root's total reads ${formatTime(cli.micros.total)} as in tfprof`);
  const cmd = await page.textContent('#command');
  check(/^tfprof --profile_path=\S+ scope -max_depth 3 -order_by micros -select (micros,bytes|bytes,micros)$/
    .test(cmd), `scope: the equivalent command is shown (${cmd})`);
  // Expand the first node with children.
  const i = cli.children.findIndex((c) => c.children.length > 0);
  const parent = cli.children[i];
  const toggle = `#view-table tbody tr[data-depth="1"]:nth-child(${i + 2}) .toggle`;
  await page.$eval(toggle, (e) => e.click());
  await page.waitForFunction((n) => document.querySelectorAll(
    '#view-table tbody tr[data-depth="2"]').length === n, parent.children.length);
  rows = await tableRows(page);
  const kids = rows.filter((r) => r.depth === 2);
  check(parent.children.every((c, k) => sameNode(kids[k], c, ['micros', 'bytes'], c.name)),
    `scope: expanding ${parent.name} shows its ${parent.children.length} children as the CLI`);
  await shot(page, 'scope.png');
  // Collapse again.
  await page.$eval(toggle, (e) => e.click());
  check((await tableRows(page)).every((r) => r.depth < 2), 'scope: collapsing hides the children');
  // Options through the form: order by bytes.
  await page.selectOption('#options select[name="order_by"]', 'bytes');
  await routed(page, () => page.click('#apply'));
  check(page.url().includes('order_by=bytes'), 'scope: Apply puts the options in the URL');
  const byBytes = expect('scope_bytes.json').root;
  rows = await tableRows(page);
  check(byBytes.children.every((c, k) => sameNode(rows[1 + k], c, ['micros', 'bytes'], c.name)),
    'scope: -order_by bytes from the form orders rows as the CLI');
  // Sorting by a column header.
  await routed(page, () => page.click('#view-table th.sortable >> text="micros (total)"'));
  rows = await tableRows(page);
  check(page.url().includes('order_by=micros') &&
    cli.children.every((c, k) => sameNode(rows[1 + k], c, ['micros', 'bytes'], c.name)),
  'scope: clicking the micros column header orders by micros again');
}

async function testOp(page) {
  const cli = expect('op.json').root;
  await open(page, 'tab=op&select=micros,occurrence&order_by=micros');
  const rows = await tableRows(page);
  const n = Math.min(200, cli.children.length);
  check(rows.length === n, `op: ${n} rows on the first page (${rows.length})`);
  check(cli.children.slice(0, n).every((c, k) => sameNode(rows[k], c, ['micros'], c.name) &&
    rows[k]['runs.'] === c.occurrence.run), 'op: every row equals the CLI\'s (time and runs)');
  let cum = 0;
  check(cli.children.slice(0, n).every((c, k) => {
    cum += c.micros.self;
    return rows[k]['pct..text'] === pct(c.micros.self, cli.micros.total) &&
      rows[k]['cum_pct..text'] === pct(cum, cli.micros.total);
  }), 'op: the % and cumulative % columns are each row\'s self time over the CLI\'s total');
  const count = await page.$eval('#row-count', (e) => Number(e.dataset.count));
  check(count === cli.children.length, `op: the row count is shown (${count} op types)`);
  // Names: left-aligned, cut with an ellipsis, the whole name on hover.
  const cell = await page.$eval('#view-table tbody td.name', (td) => {
    const st = getComputedStyle(td);
    return {align: st.textAlign, overflow: st.textOverflow, title: td.title,
      name: td.parentElement.dataset.name};
  });
  check(cell.align === 'left' && cell.overflow === 'ellipsis' && cell.title === cell.name,
    `op: names are left-aligned with an ellipsis and the full name on hover (${JSON.stringify(cell)})`);
  await shot(page, 'op.png');
}

async function testFlame(page) {
  const cli = expect('scope.json').root;
  await open(page, 'tab=scope&mode=flame&max_depth=3&select=micros,bytes&order_by=micros');
  const frames = await page.$$eval('#flame .frame', (fs) => fs.map((f) => ({
    name: f.dataset.name, total: Number(f.dataset.total),
    left: parseFloat(f.style.left), width: parseFloat(f.style.width)})));
  check(frames.length > 1 && frames[0].name === cli.name, `flame: ${frames.length} frames, the root on top`);
  const top = cli.children[0];
  const f = frames.find((x) => x.name === top.name);
  const expectedWidth = frames[0].width * top.micros.total / cli.micros.total;
  check(f && f.total === top.micros.total && Math.abs(f.width - expectedWidth) < 1,
    `flame: ${top.name} is as wide as its share of the total (${top.micros.total}us)`);
  await page.hover(`#flame .frame[data-name="${top.name}"]`);
  const tip = await page.textContent('#tooltip');
  check(tip.includes(top.name) && tip.includes(formatTime(top.micros.total)),
    'flame: hovering a frame shows its total');
  await shot(page, 'flame.png');
  await routed(page, () => page.click(`#flame .frame[data-name="${top.name}"]`));
  const zoomed = await page.$eval(`#flame .frame[data-name="${top.name}"]`, (e) => parseFloat(e.style.width));
  check(Math.abs(zoomed - frames[0].width) < 1, 'flame: clicking a frame zooms it to the full width');
}

async function testSteps(page) {
  const cli = expect('steps.json');
  await open(page, 'tab=steps');
  const bars = await page.$$eval('#steps-chart rect.bar', (bs) => bs.map((b) => ({
    step: Number(b.dataset.step), value: Number(b.dataset.value)})));
  check(bars.length === cli.steps.length &&
    bars.every((b, i) => b.step === cli.steps[i].step && b.value === cli.steps[i].wall_micros),
  `steps: a bar per step (${bars.length}) with the CLI's wall time`);
  await page.click('#steps-table th >> text="wall_micros"');
  const first = await page.$eval('#steps-table tbody tr td[data-key="step"]', (td) => Number(td.textContent));
  const slowest = cli.steps.reduce((a, b) => (b.wall_micros > a.wall_micros ? b : a));
  check(first === slowest.step, `steps: sorting by wall_micros puts the slowest step (${slowest.step}) first`);
  await shot(page, 'steps.png');
}

async function testKernel(page) {
  const cli = expect('kernel.json').root;
  await open(page, 'tab=kernel&order_by=micros');
  const rows = await tableRows(page);
  // One time column a kernel: its own time, which the CLI's total equals.
  check(rows.length === cli.children.length && cli.children.every((c, k) =>
    rows[k].name === c.name && rows[k]['micros.self'] === c.micros.self &&
    c.micros.total === c.micros.self),
  `kernel: ${cli.children.length} kernels with the CLI's times`);
  const launches = await page.$$eval('#view-table tbody tr td[data-attr="launches"]',
    (tds) => tds.map((td) => Number(td.textContent)));
  check(cli.children.every((c, k) => launches[k] === c.kernel.launches),
    'kernel: each row shows the CLI\'s launch count');
  // The top kernel's launching ops link to the scope view of that op with
  // its kernels under it.
  const top = cli.children[0];
  const links = await page.$$eval('#view-table tbody tr td[data-attr="launched by"]',
    (tds) => [...tds[0].querySelectorAll('a.launcher-link')].map((a) => ({
      name: a.textContent, href: a.getAttribute('href')})));
  check(links.length === top.kernel.ops.length && top.kernel.ops.every((o, i) =>
    links[i].name === o.name && new RegExp(`^(?:${new URLSearchParams(links[i].href.slice(1))
      .get('show_name_regexes')})$`).test(o.name)),
  `kernel: ${top.name.slice(0, 30)}…'s ${links.length} launching op(s) link to the scope view`);
  await shot(page, 'kernel.png');
  await routed(page, () => page.click('#view-table tbody tr td[data-attr="launched by"] a'));
  const opName = top.kernel.ops[0].name;
  const opRow = (await tableRows(page)).find((r) => r.name === opName);
  if (opRow) {
    await page.$$eval('#view-table tbody tr', (rs, n) => rs.find((r) => r.dataset.name === n)
      .querySelector('.toggle').click(), opName);
    await page.waitForFunction((n) => [...document.querySelectorAll('#view-table tbody tr')]
      .some((r) => r.dataset.name === n), top.name, {timeout: 10000}).catch(() => {});
  }
  const scope = await tableRows(page);
  check(page.url().includes('tab=scope') && opRow !== undefined &&
    scope.some((r) => r.name === top.name && r.depth === opRow.depth + 1),
  `kernel: the link opens ${top.kernel.ops[0].name.slice(0, 40)}… in the scope view with the kernel under it`);
  await open(page, 'tab=kernel&mode=flame&order_by=micros');
  const frames = await page.$$eval('#flame .frame', (fs) => fs.map((f) => ({
    name: f.dataset.name, width: parseFloat(f.style.width)})));
  // The page asks for subtrees of at least 1/5000 of the root, and draws
  // those at least half a pixel wide.
  const shown = cli.children.filter((c) => c.micros.total > 0 &&
    c.micros.total >= cli.micros.total / 5000 &&
    frames[0].width * c.micros.total / cli.micros.total >= 0.5);
  check(frames.length === 1 + shown.length && shown.every((c) => frames.some((f) => f.name === c.name)),
    `kernel: the flame graph has the root and a frame per kernel of 1/5000 of the total and half a pixel or more (${frames.length})`);
}

// The FLOP/s column of a table row (data-value; '' where n/a) against the
// CLI's accelerator_flop_rate (null where n/a).
function sameRate(row, cli) {
  const text = row['accelerator_flop_rate..text'];
  return cli === null ? text === '--' : row['accelerator_flop_rate.'] === cli;
}

async function testTraceFlops(page) {
  const s = expect('summary.json');
  await open(page, 'tab=summary');
  const mfu = await page.$eval('#mfu', (e) => ({text: e.textContent, value: e.dataset.value}));
  check(s.mfu !== null && Number(mfu.value) === s.mfu &&
    mfu.text === `${(100 * s.mfu).toFixed(1)}%`,
  `summary: MFU ${mfu.text}, the CLI's summary -output json mfu (${s.mfu})`);
  const rate = await page.$eval('#flop-rate', (e) => Number(e.dataset.value));
  check(rate === s.flop_rate, `summary: the achieved FLOP/s is the CLI's (${s.flop_rate})`);
  const flops = await page.$eval('#flops-per-step', (e) => Number(e.dataset.value));
  check(flops === s.flops_per_step, `summary: the float ops per step are the CLI's (${flops})`);
  const text = await page.textContent('#mfu-text');
  check(text === s.mfu_text && text.includes(s.peak_dtype),
    `summary: the peak, its dtype and source are shown (${text})`);
  await shot(page, 'trace_summary.png');
  for (const view of ['op', 'kernel']) {
    const cli = expect(`${view}_rate.json`).root;
    await open(page, `tab=${view}&order_by=float_ops`);
    const rows = await tableRows(page);
    const want = cli.children.slice(0, 200);
    check(want.length > 0 && want.every((c, k) => rows[k] && rows[k].name === c.name &&
      sameRate(rows[k], c.accelerator_flop_rate)),
    `${view}: the FLOP/s column is the CLI's -select accelerator_flop_rate (${want.length} rows)`);
    check(want.some((c) => c.accelerator_flop_rate > 0),
      `${view}: some rows have a rate`);
    const cmd = await page.textContent('#command');
    check(cmd.includes('accelerator_flop_rate'), `${view}: the command selects the rate (${cmd})`);
  }
}

async function testDiff(page) {
  const cli = expect('diff.json').root;
  await open(page, 'tab=diff&diffview=scope&max_depth=2');
  const rows = await page.$$eval('#diff-table tbody tr:not([hidden])', (rs) => rs.map((r) => ({
    name: r.dataset.name,
    delta: Number(r.querySelector('td[data-attr="micros"]').dataset.value),
    cls: r.querySelector('td[data-attr="micros"]').className})));
  const want = [cli, ...cli.children];
  check(rows.length === want.length && want.every((n, i) => rows[i].name === n.name &&
    rows[i].delta === n.micros.delta), `diff: ${want.length} rows with the CLI's changes in micros`);
  const slower = want.findIndex((n) => n.micros.delta > 0);
  const faster = want.findIndex((n) => n.micros.delta < 0);
  check((slower < 0 || rows[slower].cls === 'slower') && (faster < 0 || rows[faster].cls === 'faster'),
    'diff: slower rows red, faster rows green');
  await shot(page, 'diff.png');
}

// The CLI's text diff: each row's "%" (or "new", or '' when both are 0), in
// the order of the JSON's rows (depth first).
function cliPercents(file, json) {
  const lines = fs.readFileSync(path.join(expectDir, file), 'utf8').split('\n');
  const rows = [];
  const walk = (n, depth) => {
    rows.push({n, depth});
    for (const c of n.children) walk(c, depth + 1);
  };
  walk(json.root, 0);
  let at = 1;  // after the legend
  return rows.map(({n, depth}) => {
    const prefix = `${' '.repeat(2 * depth)}${n.name} (${json.attribute} `;
    while (at < lines.length && !lines[at].startsWith(prefix)) at++;
    const m = /^[^,]+, [^,;)]+(?:, ([^;)]+))?[;)]/.exec(lines[at].slice(prefix.length));
    at++;
    return m ? (m[1] || '') : null;
  });
}

// The diff table's rows as the page shows them.
async function diffRows(page) {
  return page.$$eval('#diff-table tbody tr:not([hidden])', (rs) => rs.map((r) => {
    const change = r.querySelector('td[data-attr]:not([data-part])');
    const ci = r.querySelector('td.verdict .ci');
    const more = r.querySelector('td.verdict .more');
    return {
      name: r.dataset.name, verdict: r.dataset.verdict,
      delta: Number(change.dataset.value), cls: change.className,
      pct: r.querySelector('td[data-part="pct"]').textContent,
      low: ci ? Number(ci.dataset.low) : null, high: ci ? Number(ci.dataset.high) : null,
      more: more ? Number(more.dataset.more) : null,
      badge: r.querySelector('td.verdict .badge').textContent,
      shift: r.querySelector('td.shift').textContent,
    };
  }));
}

async function testDiffView(page, view) {
  const cli = expect(`${view}.json`);
  const pcts = cliPercents(`${view}.txt`, cli);
  await open(page, `tab=diff&diffview=${view}`);
  const rows = await diffRows(page);
  const want = [cli.root, ...cli.root.children];
  check(rows.length === want.length && want.every((n, i) => rows[i].name === n.name),
    `diff ${view}: ${want.length} rows in the CLI's order (largest change first)`);
  const a = cli.attribute;
  const bad = [];
  want.forEach((n, i) => {
    const r = rows[i] || {};
    const ok = r.delta === n[a].delta && r.pct === pcts[i] && r.verdict === n.verdict &&
      r.badge === n.verdict && r.low === n.ci_low && r.high === n.ci_high &&
      r.more === (n.verdict === 'inconclusive' ? n.more_steps_needed : null) &&
      r.shift === (n.shift === undefined ? '' : `[${n.shift + 1}]`);
    if (!ok) bad.push(`${n.name}: page ${JSON.stringify(r)} cli % ${pcts[i]}`);
  });
  check(bad.length === 0, `diff ${view}: every row's change, %, verdict, interval, ` +
    `steps needed and shift equal the CLI's${bad.length ? ': ' + bad.slice(0, 3).join('; ') : ''}`);
  check(pcts.some((p) => /^[+-]\d+\.\d%$/.test(p)), `diff ${view}: the % column was compared`);
  const verdicts = new Set(want.map((n) => n.verdict));
  check(verdicts.size >= 2, `diff ${view}: rows with ${[...verdicts].join(', ')}`);
  const shifts = await page.$$eval('#diff-shifts li.shift', (ls) => ls.map((l) => ({
    parent: l.dataset.parent, removed: l.querySelector('.removed').textContent,
    added: l.querySelector('.added').textContent,
    verdict: l.querySelector('td.verdict').dataset.verdict})));
  check(shifts.length === cli.shifts.length && cli.shifts.every((s, i) =>
    shifts[i].parent === s.parent && shifts[i].verdict === s.verdict &&
    s.removed.every((m) => shifts[i].removed.includes(m.name)) &&
    s.added.every((m) => shifts[i].added.includes(m.name))),
  `diff ${view}: ${cli.shifts.length} cost shift(s) as the CLI's (parent, members, verdict)`);
  return cli;
}

async function testDiffPage(page) {
  const ops = await testDiffView(page, 'op');
  check(ops.root.children.some((n) => n.verdict === 'regressed'),
    'diff op: the op whose kernels are slower is regressed');
  const top = expect('top.json');
  const entries = await page.$$eval('#top-changes tbody tr', (rs) => rs.map((r) => ({
    where: r.dataset.where, name: r.dataset.name,
    verdict: r.querySelector('td.verdict').dataset.verdict})));
  check(top.changes.length > 0 && entries.length === top.changes.length &&
    top.changes.every((e, i) => entries[i].where === e.where && entries[i].name === e.name &&
      entries[i].verdict === e.verdict),
  `diff: the top-changes panel lists the CLI's ${top.changes.length} changes`);
  await shot(page, 'diff.png');
  const kernels = await testDiffView(page, 'kernel');
  check(kernels.shifts.length > 0, 'diff kernel: the renamed kernel is a cost shift');
  await shot(page, 'diff_kernel.png');
  // The steps comparison.
  const steps = expect('steps.json');
  const text = fs.readFileSync(path.join(expectDir, 'steps.txt'), 'utf8');
  await open(page, 'tab=diff&diffview=steps');
  const measures = await page.$$eval('#diff-steps tbody tr', (rs) => rs.map((r) => ({
    measure: r.dataset.measure, verdict: r.dataset.verdict,
    base: Number(r.children[1].dataset.value), current: Number(r.children[2].dataset.value),
    pct: r.querySelector('td.pct').textContent})));
  check(measures.length === steps.measures.length && steps.measures.every((m, i) => {
    const line = text.split('\n').find((l) => l.startsWith(`${m.measure.replace(/_ns$/, '')}:`));
    const pct = (/\), [^,]+, ([+-]\d+\.\d%|new)/.exec(line || '') || [])[1] || '';
    return measures[i].measure === m.measure && measures[i].verdict === m.verdict &&
      measures[i].base === m.base_median && measures[i].current === m.current_median &&
      measures[i].pct === pct;
  }), `diff steps: ${steps.measures.length} measures with the CLI's medians, % and verdicts`);
  await shot(page, 'diff_steps.png');
}

async function testSummaryAndAdvise(page) {
  const steps = expect('steps.json');
  await open(page, 'tab=summary');
  check(await page.$('#summary-cards') !== null, 'summary: the cards are shown');
  const bars = await page.$$eval('#steps-chart rect.bar', (b) => b.length);
  check(bars === steps.steps.length, `summary: the steps chart has ${bars} bars`);
  const ops = await page.$$eval('#top-op tbody tr', (r) => r.map((x) =>
    [...x.children].slice(0, 4).map((td) => td.textContent).join('|')));
  const op = expect('op.json').root;
  const cliOps = op.children.filter((c) => c.micros.self > 0).slice(0, 10).map((c) =>
    `${c.name}|${formatTime(c.micros.self)}|${pct(c.micros.self, op.micros.total)}|${c.occurrence.run}`);
  check(ops.length > 0 && JSON.stringify(ops) === JSON.stringify(cliOps),
    'summary: the top ops are the CLI\'s, with their own time, % of all and runs');
  await shot(page, 'summary.png');
  await open(page, 'tab=advise');
  const checkers = await page.$$eval('#advice h2', (h) => h.length);
  check(checkers > 0, `advise: ${checkers} checkers' findings shown`);
}

// Titles name the input and tab; view tabs keep the options; an unknown
// tab says so.
async function testTabs(page) {
  await open(page, 'tab=scope&max_depth=3&select=micros,bytes&order_by=micros');
  const title = await page.title();
  check(/^scope · profile_100 · tfprof$/.test(title), `tabs: the title names the tab and input (${title})`);
  const href = await page.$eval('#tab-op', (a) => a.getAttribute('href'));
  const kept = new URLSearchParams(href.slice(1));
  check(kept.get('tab') === 'op' && kept.get('max_depth') === '3' &&
    kept.get('select') === 'micros,bytes', `tabs: the op tab keeps the options (${href})`);
  await page.goto(`${url}?load=${++loads}#tab=nope`);
  await page.waitForSelector('#content[data-state="ready"]', {timeout: 30000});
  const err = await page.$eval('#error', (e) => (e.hidden ? '' : e.textContent));
  check(err.includes('no tab \'nope\''), `tabs: an unknown tab says so (${err})`);
  const favicon = await page.$eval('link[rel="icon"]', (l) => l.href);
  const r = await page.request.get(favicon);
  check(r.status() === 200 && r.headers()['content-type'].startsWith('image/svg'),
    `tabs: the favicon is served (${favicon})`);
}

// The overview of a PyTorch trace against the CLI: each step's compute,
// memcpy (communication when the steps table has it) and idle equal
// `steps -output csv`; GPU utilization is their busy time over the wall
// time; the top kernels and ops with their %; the diagnosis; a step bar
// opens that step's timeline.
async function testOverview(page) {
  const csv = readCsv('steps.csv');
  await open(page, 'tab=overview');
  const parts = await page.$$eval('#steps-chart rect.part', (rs) => rs.map((r) => ({
    step: Number(r.dataset.step), part: r.dataset.part, value: Number(r.dataset.value)})));
  // Communication is stacked by its exposed part (drawn when some step has
  // communication; testRanksOverview checks it).
  const comm = csv.some((r) => r.communication_micros > 0);
  const want = ['compute_micros', 'memcpy_micros', 'exposed_communication_micros', 'idle_micros']
    .filter((k) => k in csv[0] && (k !== 'exposed_communication_micros' || comm));
  check(want.length >= 3 && parts.length === csv.length * want.length &&
    csv.every((row) => want.every((k) => parts.some((p) => p.step === row.step &&
      p.part === k && p.value === row[k]))),
  `overview: ${csv.length} steps split into ${want.join(', ')} as steps -output csv`);
  check(csv.every((row) => Math.abs(want.reduce((a, k) => a + row[k], 0) - row.wall_micros) < 0.01),
    'overview: the parts of each step add up to its wall time (CLI)');
  const sum = (k) => csv.reduce((a, r) => a + r[k], 0);
  const util = await page.$eval('#gpu-utilization', (e) => e.textContent);
  check(util === pct(sum('accelerator_micros'), sum('wall_micros')),
    `overview: GPU utilization ${util} = accelerator over wall time of the CLI's steps`);
  const diag = await page.textContent('#diagnosis');
  check(diag.startsWith(`GPU idle ${pct(sum('idle_micros'), sum('wall_micros'))} of the step time`),
    `overview: the diagnosis (${diag})`);
  const tops = [['top-kernel', 'kernel.json', 'micros'],
    ['top-op-accelerator', 'op_accelerator_micros.json', 'accelerator_micros'],
    ['top-op-cpu', 'op_cpu_micros.json', 'cpu_micros']];
  for (const [id, file, attr] of tops) {
    const cli = expect(file).root;
    const rows = await page.$$eval(`#${id} tbody tr`, (r) => r.map((x) =>
      [...x.children].slice(0, 3).map((td) => td.textContent).join('|')));
    const cliRows = cli.children.filter((c) => c[attr].self > 0).slice(0, 10).map((c) =>
      `${c.name}|${formatTime(c[attr].self)}|${pct(c[attr].self, cli[attr].total)}`);
    check(rows.length > 0 && JSON.stringify(rows) === JSON.stringify(cliRows),
      `overview: ${id} are the CLI's (name, ${attr}, % of all)`);
  }
  const summary = expect('summary.json');
  const peaks = await page.$$eval('#devices-table tbody tr', (rs) => rs.map((r) => ({
    device: r.querySelector('td[data-key="device"]').textContent,
    busy: r.querySelector('td[data-key="busy %"]').textContent,
    peak: Number(r.querySelector('td[data-key="peak_memory"]').dataset.value),
    text: r.querySelector('td[data-key="peak_memory"]').textContent})));
  const bytes = (b) => (b < 1000 ? `${b}B` : b < 1e6 ? `${(b / 1e3).toFixed(2)}KB` :
    `${(b / 1e6).toFixed(2)}MB`);
  check(peaks.length === summary.devices.length && summary.devices.every((d, i) =>
    peaks[i].device === d.name && peaks[i].peak === d.peak_bytes &&
    peaks[i].text === (d.peak_bytes < 0 ? 'n/a' : bytes(d.peak_bytes)) &&
    peaks[i].busy === (d.busy_micros < 0 ? 'n/a' :
      pct(d.busy_micros, summary.time_per_step.wall_micros.mean))),
  'overview: each device\'s peak memory and busy % (busy over the mean step wall time) are the CLI summary\'s');
  await shot(page, 'overview.png');
  const step = csv[csv.length - 1].step;
  await routed(page, () => page.click(`#steps-chart rect.bar[data-step="${step}"]`));
  const chosen = await page.$eval('#timeline-step', (e) => e.value);
  check(page.url().includes('tab=timeline') && chosen === String(step),
    `overview: clicking step ${step}'s bar opens its timeline`);
}

// The ranks tab of two DDP ranks (testdata/ranks/ddp-gloo) against the
// CLI's `ranks` (ranks.json, ranks.txt) and its aligned timeline of step 3
// (ranks_timeline3.json): each rank's offset and uncertainty, the heat
// map's wall and wait per rank and step (hover text in the CLI's units),
// the stragglers; a click on a cell draws that step of every rank.
async function testRanks(page) {
  const cli = expect('ranks.json');
  const text = fs.readFileSync(path.join(expectDir, 'ranks.txt'), 'utf8');
  await open(page, 'tab=ranks');
  const offsets = await page.$$eval('#ranks-offsets tbody tr', (rs) => rs.map((r) => ({
    rank: Number(r.dataset.rank),
    offset: Number(r.querySelector('[data-key="offset_micros"]').dataset.value),
    offsetText: r.querySelector('[data-key="offset_micros"]').textContent,
    spread: Number(r.querySelector('[data-key="offset_uncertainty_micros"]').dataset.value),
    spreadText: r.querySelector('[data-key="offset_uncertainty_micros"]').textContent})));
  check(cli.ranks.length === 2 && offsets.length === cli.ranks.length &&
    cli.ranks.every((r, i) => offsets[i].rank === r.rank && offsets[i].offset === r.offset_micros &&
      offsets[i].spread === r.offset_uncertainty_micros),
  `ranks: ${offsets.length} ranks' clock offsets and uncertainties are ranks -output json's`);
  const lines = offsets.filter((o) => o.offsetText !== 'reference clock').map((o) =>
    `rank ${o.rank}: ${o.offsetText} +- ${o.spreadText.replace(/^± /, '')} (`);
  check(lines.length === 1 && lines.every((l) => text.includes(l)),
    `ranks: the offsets read as the CLI's text (${lines.join('; ')})`);
  // The CLI's text table: rank, step, wall, compute, communication,
  // exposed, wait, idle.
  const table = [...text.matchAll(/^\s+(\d+)\s+(\d+)((?:\s+\S+){6})$/gm)].map((m) =>
    [Number(m[1]), Number(m[2]), ...m[3].trim().split(/\s+/)]);
  const cells = async () => page.$$eval('#ranks-heatmap rect.cell', (rs) => rs.map((r) => ({
    rank: Number(r.dataset.rank), step: Number(r.dataset.step),
    value: Number(r.dataset.value), title: r.querySelector('title').textContent})));
  const cliCells = cli.ranks.flatMap((r) => r.steps.map((s) => ({rank: r.rank, ...s})));
  for (const [metric, key] of [['wall', 'wall_micros'], ['wait', 'wait_micros']]) {
    if (metric === 'wait') await routed(page, () => page.click('#metric-wait'));
    const shown = await cells();
    check(shown.length === cliCells.length && cliCells.every((c) => shown.some((x) =>
      x.rank === c.rank && x.step === c.step && x.value === c[key])),
    `ranks: the heat map's ${metric} per rank and step (${shown.length} cells) is ranks -output json's`);
  }
  const shown = await cells();
  const wrong = table.filter(([rank, step, wall, , comm, exposed, wait]) => {
    const t = (shown.find((x) => x.rank === rank && x.step === step) || {}).title || '';
    return !(t.includes(`wall ${wall}\n`) && t.includes(`wait ${wait}\n`) &&
      t.includes(`communication ${comm} (exposed ${exposed})`));
  });
  if (wrong.length) console.log(`  CLI ${JSON.stringify(wrong[0])}\n  page ${JSON.stringify(shown)}`);
  check(table.length === cliCells.length && !wrong.length,
    `ranks: hovering a cell shows the CLI's wall, communication and wait (${table.length} rows)`);
  const stragglers = await page.$$eval('#ranks-stragglers tbody tr', (rs) => rs.map((r) => {
    const v = {};
    for (const td of r.querySelectorAll('td')) v[td.dataset.key] = [td.dataset.value, td.textContent];
    return v;
  }));
  check(cli.stragglers.length === 2 && stragglers.length === cli.stragglers.length &&
    cli.stragglers.every((x, i) => Number(stragglers[i].step[0]) === x.step &&
      Number(stragglers[i].rank[0]) === x.rank &&
      Number(stragglers[i].delay[0]) === x.delay_micros &&
      stragglers[i].cause[1] === x.cause &&
      text.includes(`step ${x.step}: rank ${x.rank} arrived ${stragglers[i].delay[1]} late at ` +
        `${x.collective}; it spent ${stragglers[i]['cause time'][1]} in ${x.cause}`)),
  `ranks: the stragglers (${stragglers.map((x) => `step ${x.step[0]} rank ${x.rank[0]} ` +
    `${x.delay[1]} ${x.cause[1]}`).join('; ')}) are the CLI's`);
  await shot(page, 'ranks.png');
  await routed(page, () => page.click('#ranks-heatmap rect.cell[data-rank="1"][data-step="3"]'));
  const hp = new URLSearchParams(new URL(page.url()).hash.slice(1));
  check(hp.get('tab') === 'ranks' && hp.get('step') === '3' && hp.get('rank') === '1' &&
    await page.$('#ranks-heatmap rect.cell.chosen[data-rank="1"][data-step="3"]') !== null,
  'ranks: clicking rank 1\'s step 3 opens it');
  const want = expect('ranks_timeline3.json');
  const [download] = await Promise.all([page.waitForEvent('download'),
    page.click('#timeline-download')]);
  const got = {name: download.suggestedFilename(),
    trace: JSON.parse(fs.readFileSync(await download.path(), 'utf8'))};
  check(got.name === 'ranks_step3.json' && JSON.stringify(got.trace) === JSON.stringify(want),
    'ranks: the step\'s download is the CLI\'s ranks -step 3 -output timeline');
  const spans = want.traceEvents.filter((e) => e.ph === 'X' && typeof e.ts === 'number');
  const lanes = new Set(spans.map((e) => `${e.pid}/${e.tid}`)).size;
  const info = await page.textContent('#timeline-info');
  check(info.startsWith(`${spans.length} events on ${lanes} lanes`),
    `ranks: the aligned step is drawn (${info})`);
  await shot(page, 'ranks_timeline.png', true);
}

// The overview of the DDP ranks: every step's compute, memcpy, exposed
// communication and idle as `steps -output csv` gives them, the
// communication overlapped with compute drawn for the rest of
// communication_micros, and the communication card's mean per step.
async function testRanksOverview(page) {
  const csv = readCsv('steps.csv');
  await open(page, 'tab=overview');
  const parts = await page.$$eval('#steps-chart rect.part', (rs) => rs.map((r) => ({
    step: Number(r.dataset.step), part: r.dataset.part, value: Number(r.dataset.value)})));
  const keys = ['compute_micros', 'memcpy_micros', 'exposed_communication_micros',
    'communication_micros', 'idle_micros'];
  check(csv.length === 5 && csv.every((r) => r.communication_micros > 0) &&
    parts.length === csv.length * keys.length &&
    csv.every((row) => keys.every((k) => parts.some((p) => p.step === row.step &&
      p.part === k && p.value === row[k]))),
  `ranks overview: ${csv.length} steps' ${keys.join(', ')} drawn as steps -output csv`);
  const mean = csv.reduce((a, r) => a + r.communication_micros, 0) / csv.length;
  const card = await page.$eval('#part-communication', (e) => [Number(e.dataset.value), e.textContent]);
  check(Math.abs(card[0] - mean) < 1e-6 && card[1].startsWith(formatTime(Math.round(mean))),
    `ranks overview: communication per step ${card[1]} is the CSV's mean`);
  await shot(page, 'ranks_overview.png');
}

// A one-rank input's ranks tab says so.
async function testRanksOne(page) {
  await open(page, 'tab=ranks');
  const one = await page.$('#ranks-one');
  const title = await page.$eval('#tab-ranks', (a) => a.title);
  check(one !== null && (await one.textContent()).includes('one rank') && title === '1 rank',
    'ranks: a one-rank input\'s ranks tab says it has one rank');
}

// The memory tab against the CLI's `memory -top 50` (text) and `memory
// -output csv` (every event): each allocator's peak, its moment and step,
// its event count, and the largest allocations live at the peak.
async function testMemory(page) {
  const events = readCsv('memory.csv');
  const text = fs.readFileSync(path.join(expectDir, 'memory.txt'), 'utf8').split('\n');
  await open(page, 'tab=memory');
  const shown = await page.$$eval('section.allocator', (ss) => ss.map((s) => ({
    name: s.dataset.name,
    peak: Number(s.querySelector('.peak').dataset.value),
    peakText: s.querySelector('.peak').textContent,
    at: s.querySelector('.peak-at').textContent,
    events: Number(s.querySelector('.events').dataset.value),
    points: Number(s.querySelector('.memory-line').dataset.points),
    live: [...s.querySelectorAll('table[id^="memory-live"] tbody tr')].map((r) =>
      [...r.children].map((td) => td.textContent)),
  })));
  const heads = text.filter((l) => /^\S.*: peak /.test(l));
  check(shown.length > 0 && shown.length === heads.length,
    `memory: ${shown.length} allocators as the CLI (${heads.length})`);
  let live = 0;
  for (const a of shown) {
    const rows = events.filter((e) => String(e.allocator) === a.name);
    const max = rows.reduce((m, e) => Math.max(m, e.bytes_in_use), 0);
    const head = heads.find((l) => l.startsWith(`${a.name}: peak `)) || '';
    const m = /: peak (\S+) in use at (\S+)( \(step \d+\))?, (\d+) events$/.exec(head);
    check(m && a.peak === max && a.peakText === m[1] && a.at === m[2] + (m[3] || '') &&
      a.events === rows.length && Number(m[4]) === rows.length && a.points > 0,
    `memory ${a.name}: peak ${a.peakText} at ${a.at}, ${a.events} events: the CSV's maximum and count, the text's moment`);
    // The live blocks the CLI lists under this allocator.
    const at = text.indexOf(head);
    const cli = [];
    for (let i = at + 2; i < text.length && text[i].startsWith('  ') && !text[i].startsWith('  ...'); ++i) {
      const l = /^\s+(\S+)\s+(.*) \(allocated at (\S+)\)$/.exec(text[i]);
      if (l) cli.push([l[1], l[2], l[3]]);
    }
    live += cli.length;
    check(JSON.stringify(a.live) === JSON.stringify(cli),
      `memory ${a.name}: the ${cli.length} largest live allocations (size, op, when) are the CLI's`);
  }
  check(live > 0, `memory: live allocations were compared (${live})`);
  await shot(page, 'memory.png');
}

// Every tab of a many-step trace, timed (printed, not asserted).
async function testTimings(page) {
  const csv = readCsv('steps.csv');
  await open(page, 'tab=overview');
  const bars = await page.$$eval('#steps-chart rect.bar', (b) => b.map((x) => Number(x.dataset.value)));
  check(bars.length === csv.length && bars.every((v, i) => v === csv[i].wall_micros),
    `timings: the overview has a bar per step (${bars.length}) with the CLI's wall time`);
  for (const hash of ['tab=kernel', 'tab=op', 'tab=scope', 'tab=steps',
    `tab=timeline&step=${csv[Math.floor(csv.length / 2)].step}`, 'tab=memory', 'tab=advise']) {
    await open(page, hash);
  }
}

// The advise tab on a trace runs what `advise` runs on it: the checkers
// that fit the input, with the same reports.
async function testTraceAdvise(page) {
  const text = fs.readFileSync(path.join(expectDir, 'advise.txt'), 'utf8');
  const cli = [...text.matchAll(/^(\w+Checker):$/gm)].map((m) => m[1]);
  await open(page, 'tab=advise');
  const names = await page.$$eval('#advice h2', (h) => h.map((x) => x.textContent));
  const reports = await page.$$eval('#advice ul.reports li', (l) => l.map((x) => x.textContent));
  check(cli.length > 0 && JSON.stringify(names) === JSON.stringify(cli) &&
    !names.includes('OperationChecker') && reports.every((r) => text.includes(r)),
  `advise: the trace gets the checkers advise runs on it (${names.join(', ')}), with its ${reports.length} reports`);
}

async function main() {
  const {chromium} = require('playwright-core');
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
  const page = await browser.newPage({viewport: {width: 1400, height: 900}});
  const origin = new URL(url).origin;
  const problems = [];
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  await page.route('**/*', (route) => {
    const u = route.request().url();
    if (u.startsWith(origin + '/')) return route.continue();
    problems.push(`request outside the server: ${u}`);
    return route.abort();
  });
  try {
    const tests = traceMode ? [testOverview, testTraceAdvise, testKernel, testTraceFlops,
      testTraceTimeline, testRanksOne] :
      ranksMode ? [testRanks, testRanksOverview] : annotationsMode ? [testAnnotations] :
      diffMode ? [testDiffPage] : memoryMode ? [testMemory] : timingsMode ? [testTimings] :
        overviewMode ? [testOverview, testTimings] :
        [testSummaryAndAdvise, testTabs, testScope, testOp, testFlame, testSteps, testTimeline,
          testDiff];
    for (const t of tests) {
      try {
        await t(page);
      } catch (e) {
        check(false, `${t.name}: ${e.message.split('\n')[0]}`);
      }
    }
  } finally {
    await browser.close();
  }
  check(problems.length === 0, `no console errors, page errors or outside requests${
    problems.length ? ': ' + problems.join('; ') : ''}`);
  console.log(`web_ui_test: ${passed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
}

main().catch((e) => {
  console.log(`FAIL: ${e.stack}`);
  process.exit(1);
});
