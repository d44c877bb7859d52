#!/usr/bin/env node
// Opens Chrome trace files in a real viewer: speedscope's built web app
// (npm package `speedscope`), served from 127.0.0.1 next to the traces and
// loaded in Debian's headless Chromium through playwright-core.
//
// Usage: node viewer_test.js [--screenshots DIR] [--skip-empty]
//                            [--expect-reject FILE]...
//                            [--pprof FILE --pprof-top JSON_LIST]... FILE...
//   FILE             a trace that must load (exit 1 if one does not)
//   --skip-empty     do not open traces without any X/B/E event (speedscope
//                    refuses an empty trace with "Unrecognized format!",
//                    though the format allows it); they are listed as skipped
//   --expect-reject  a broken trace that must NOT load cleanly: proves the
//                    assertions below can fail
//   --pprof          a gzipped pprof profile (tfprof's pprof output), which
//                    speedscope imports too; --pprof-top gives the frame
//                    names (a JSON list) one of which must top its sandwich
//                    table, i.e. have the largest self value
//   --screenshots    write DIR/<n>-<file>.png of each loaded trace
// Env: CHROMIUM (default /usr/bin/chromium), VIEWER_TIMEOUT_MS (default 60000).
//
// A trace loads when, in the page:
//   * speedscope logs "Importing as Trace Event Format profile" and sets the
//     title to "<file name> - speedscope";
//   * no alert dialog (speedscope's "Unrecognized format!"), no uncaught page
//     error, no console error, no "Something went wrong", and no warning from
//     speedscope's importer (it warns when the slices of a thread do not nest,
//     e.g. "Tried to end frame ...");
//   * the toolbar names the first thread as speedscope derives it from our
//     process_name/thread_name metadata, with "(1/N)" where N is the number of
//     (pid, tid) lanes holding X/B/E events in the file;
//   * for every lane (stepping with speedscope's "n" key, up to 80 lanes), the
//     toolbar shows that lane's name and "(k/N)", and the top row of the
//     sandwich table (frames sorted by self time, which is their summed
//     duration when a lane's slices do not nest, as trace_check.js verifies
//     for our files) is a frame with the largest summed duration in that
//     lane, computed from the file.
// Nothing leaves 127.0.0.1: other requests are aborted and fail the test.
'use strict';

const fs = require('fs');
const http = require('http');
const os = require('os');
const path = require('path');
const zlib = require('zlib');

const MAX_LANES_STEPPED = 80;

function parseArgs(argv) {
  const o = { files: [], reject: [], pprof: [], screenshots: null, skipEmpty: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--expect-reject') o.reject.push(argv[++i]);
    else if (a === '--screenshots') o.screenshots = argv[++i];
    else if (a === '--skip-empty') o.skipEmpty = true;
    else if (a === '--pprof') o.pprof.push({ file: argv[++i], top: null });
    else if (a === '--pprof-top') {
      if (!o.pprof.length) throw new Error('--pprof-top before --pprof');
      o.pprof[o.pprof.length - 1].top = JSON.parse(argv[++i]);
    }
    else if (a.startsWith('--')) throw new Error(`unknown option ${a}`);
    else o.files.push(a);
  }
  if (!o.files.length && !o.reject.length && !o.pprof.length) throw new Error('no trace files given');
  for (const p of o.pprof) {
    if (!Array.isArray(p.top) || !p.top.length) throw new Error(`--pprof ${p.file} needs --pprof-top`);
  }
  for (const f of [...o.files, ...o.reject, ...o.pprof.map((p) => p.file)]) {
    if (!f || !fs.existsSync(f)) throw new Error(`no such file: ${f}`);
  }
  return o;
}

function readEvents(file) {
  let buf = fs.readFileSync(file);
  if (buf[0] === 0x1f && buf[1] === 0x8b) buf = zlib.gunzipSync(buf);
  const root = JSON.parse(buf.toString('utf8'));
  return Array.isArray(root) ? root : root.traceEvents;
}

// What speedscope should show for a trace: its lanes in speedscope's order
// (pid, then tid, both zero-padded numbers), each lane's display name and
// the frames with the largest total duration. speedscope names a frame
// "<name> <JSON of args>" (just "<name>" without args).
function expectation(file) {
  let events;
  try {
    events = readEvents(file);
  } catch (e) {
    return { error: `unreadable: ${e.message}` };
  }
  if (!Array.isArray(events)) return { error: 'no event array' };
  const procNames = new Map();
  const threadNames = new Map();
  const lanes = new Map();
  for (const ev of events) {
    if (!ev || typeof ev !== 'object') continue;
    if (ev.ph === 'M' && ev.args && ev.args.name) {
      if (ev.name === 'process_name') procNames.set(ev.pid, ev.args.name);
      if (ev.name === 'thread_name') threadNames.set(`${ev.pid}:${ev.tid}`, ev.args.name);
    }
    if (ev.ph === 'X' || ev.ph === 'B' || ev.ph === 'E') {
      const key = `${ev.pid}:${ev.tid}`;
      if (!lanes.has(key)) lanes.set(key, { pid: ev.pid, tid: ev.tid, weights: new Map(), open: [] });
      const lane = lanes.get(key);
      if (ev.ph === 'X') {
        const frame = ev.args ? `${ev.name || '(unnamed)'} ${JSON.stringify(ev.args)}` : `${ev.name || '(unnamed)'}`;
        lane.weights.set(frame, (lane.weights.get(frame) || 0) + (ev.dur || 0));
      } else {
        lane.exact = false;  // B/E: durations are not summed here
      }
    }
  }
  const pad = (v) => String(v).padStart(10, '0');
  const numeric = [...lanes.values()].every((l) => Number.isInteger(l.pid) && l.pid >= 0 && Number.isInteger(l.tid) && l.tid >= 0);
  const ordered = [...lanes.values()].sort((a, b) => {
    const ka = `${pad(a.pid)}:${pad(a.tid)}`;
    const kb = `${pad(b.pid)}:${pad(b.tid)}`;
    return ka < kb ? -1 : ka > kb ? 1 : 0;
  });
  for (const l of ordered) {
    const p = procNames.get(l.pid);
    const t = threadNames.get(`${l.pid}:${l.tid}`);
    if (p != null && t != null) l.name = `${p} (pid ${l.pid}), ${t} (tid ${l.tid})`;
    else if (p != null) l.name = `${p} (pid ${l.pid}, tid ${l.tid})`;
    else if (t != null) l.name = `${t} (pid ${l.pid}, tid ${l.tid})`;
    else l.name = `pid ${l.pid}, tid ${l.tid}`;
    const max = Math.max(...l.weights.values());
    l.top = new Set([...l.weights].filter(([, w]) => w === max).map(([f]) => f));
  }
  return { lanes: ordered, ordered: numeric };
}

function contentType(f) {
  const ext = path.extname(f);
  return {
    '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.css': 'text/css',
    '.png': 'image/png', '.ico': 'image/x-icon', '.wasm': 'application/wasm',
    '.woff2': 'font/woff2', '.json': 'application/json', '.txt': 'text/plain',
    '.gz': 'application/octet-stream',
  }[ext] || 'application/json';
}

// Serves speedscope under /speedscope/ and trace i under /trace/<i>/<name>.
function startServer(appDir, traces) {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://127.0.0.1');
    let file = null;
    const m = /^\/trace\/(\d+)\/[^/]+$/.exec(url.pathname);
    if (m && traces[Number(m[1])]) {
      file = traces[Number(m[1])];
    } else if (url.pathname.startsWith('/speedscope/')) {
      const rel = decodeURIComponent(url.pathname.slice('/speedscope/'.length)) || 'index.html';
      const full = path.resolve(appDir, rel);
      if (full.startsWith(appDir + path.sep)) file = full;
    } else if (url.pathname === '/favicon.ico') {
      res.writeHead(204);
      res.end();
      return;
    }
    if (!file) {
      res.writeHead(404);
      res.end();
      return;
    }
    fs.readFile(file, (err, data) => {
      if (err) {
        res.writeHead(404);
        res.end();
        return;
      }
      res.writeHead(200, { 'Content-Type': contentType(file), 'Cache-Control': 'no-store' });
      res.end(data);
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

// The first row of the sandwich table: a header table whose last column is
// "Symbol Name", followed by the (virtualized) table of rows.
function sandwichTopRow() {
  const th = [...document.querySelectorAll('th')].find((h) => h.textContent.trim() === 'Symbol Name');
  if (!th) return null;
  const header = th.closest('table');
  for (const tr of header.parentElement.querySelectorAll('tr')) {
    const tds = tr.querySelectorAll('td');
    if (tr.closest('table') !== header && tds.length === 3) return tds[2].textContent;
  }
  return null;
}

const IGNORED_CONSOLE = [/GL Driver Message/, /WebGL/, /GPU stall/, /Automatic fallback to software WebGL/];

async function openTrace(context, base, index, file, screenshotPath, timeoutMs, pprofTop) {
  const problems = [];
  const logs = [];
  const page = await context.newPage();
  page.on('console', (m) => {
    const text = m.text();
    logs.push(text);
    if (IGNORED_CONSOLE.some((r) => r.test(text))) return;
    if (m.type() === 'error') problems.push(`console error: ${text.slice(0, 200)}`);
    if (m.type() === 'warning') problems.push(`speedscope warning: ${text.slice(0, 200)}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message.slice(0, 200)}`));
  page.on('dialog', async (d) => {
    problems.push(`dialog: ${d.message().slice(0, 200)}`);
    await d.dismiss().catch(() => {});
  });
  const name = path.basename(file);
  const traceUrl = `${base}/trace/${index}/${encodeURIComponent(name)}`;
  const title = `${name} - speedscope`;
  try {
    await page.goto(`${base}/speedscope/index.html#profileURL=${encodeURIComponent(traceUrl)}&view=sandwich`);
    const deadline = Date.now() + timeoutMs;
    // Loaded (title set), or failed (a dialog or error came up).
    while (Date.now() < deadline) {
      if ((await page.title()) === title || problems.length) break;
      await page.waitForTimeout(100);
    }
    if ((await page.title()) !== title) {
      problems.push(`title is ${JSON.stringify(await page.title())}, not ${JSON.stringify(title)} after loading`);
    }
    const importer = pprofTop ? 'Importing as protobuf encoded pprof file' : 'Importing as Trace Event Format profile';
    if (!logs.includes(importer)) {
      problems.push(`speedscope did not log "${importer}" (log: ${JSON.stringify(logs.filter((l) => /Import/.test(l)))})`);
    }
    const text = await page.evaluate(() => document.body.innerText);
    if (/Something went wrong/.test(text)) problems.push('page shows "Something went wrong"');
    if (problems.length) return { problems, lanes: 0 };
    if (pprofTop) {
      const top = await page.evaluate(sandwichTopRow);
      if (!pprofTop.includes(top)) {
        problems.push(`sandwich top frame ${JSON.stringify(top)}, want one of ${JSON.stringify(pprofTop.slice(0, 3))}`);
      }
      if (screenshotPath) await page.screenshot({ path: screenshotPath });
      return { problems, lanes: 1, stepped: 1 };
    }

    const exp = expectation(file);
    if (exp.error) return { problems: [`cannot compute expectation: ${exp.error}`], lanes: 0 };
    const n = exp.lanes.length;
    const stepped = exp.ordered ? Math.min(n, MAX_LANES_STEPPED) : 1;
    for (let k = 0; k < stepped; k++) {
      const lane = exp.lanes[k];
      const want = n > 1 ? `${lane.name} (${k + 1}/${n})` : lane.name;
      if (k > 0) await page.keyboard.press('n');
      const shown = await page.waitForFunction(
        (w) => document.body.innerText.split('\n').some((l) => l.trim() === w),
        want, { timeout: 5000 },
      ).then(() => true, () => false);
      if (!shown) {
        const line = (await page.evaluate(() => document.body.innerText)).split('\n').find((l) => /\(\d+\/\d+\)|pid /.test(l));
        problems.push(`lane ${k + 1}/${n}: toolbar shows ${JSON.stringify(line)}, want ${JSON.stringify(want)}`);
        break;
      }
      if (!exp.ordered) break;
      const top = await page.evaluate(sandwichTopRow);
      if (lane.exact !== false && !lane.top.has(top)) {
        problems.push(`lane ${k + 1}/${n} (${lane.name}): sandwich top frame ${JSON.stringify(top)}, ` +
          `want one of ${JSON.stringify([...lane.top].slice(0, 3))}`);
      }
    }
    if (screenshotPath) {
      if (stepped > 1) await page.keyboard.press('p');
      await page.screenshot({ path: screenshotPath });
    }
    if (problems.length) return { problems, lanes: n };
    return { problems, lanes: n, stepped };
  } finally {
    await page.close();
  }
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const { chromium } = require('playwright-core');
  const appDir = path.dirname(require.resolve('speedscope/dist/release/index.html'));
  const executablePath = process.env.CHROMIUM || '/usr/bin/chromium';
  if (!fs.existsSync(executablePath)) throw new Error(`${executablePath} not found (apt-get install chromium)`);
  const timeoutMs = Number(process.env.VIEWER_TIMEOUT_MS || 60000);
  const all = [...o.files, ...o.reject, ...o.pprof.map((p) => p.file)];
  const server = await startServer(appDir, all);
  const base = `http://127.0.0.1:${server.address().port}`;
  const profileDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tfprof-viewer-'));
  const blocked = [];
  let context;
  let failures = 0;
  let passed = 0;
  try {
    context = await chromium.launchPersistentContext(profileDir, {
      executablePath,
      headless: true,
      viewport: { width: 1400, height: 900 },
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
        '--disable-background-networking', '--disable-component-update', '--disable-sync',
        '--disable-default-apps', '--disable-extensions', '--no-default-browser-check'],
    });
    await context.route('**/*', (route) => {
      const u = route.request().url();
      if (u.startsWith(`${base}/`) || u.startsWith('data:') || u.startsWith('blob:')) return route.continue();
      blocked.push(u);
      return route.abort();
    });
    console.log(`viewer_test: speedscope ${require('speedscope/package.json').version}, ` +
      `playwright-core ${require('playwright-core/package.json').version}, ${executablePath}`);
    if (o.screenshots) fs.mkdirSync(o.screenshots, { recursive: true });
    for (let i = 0; i < all.length; i++) {
      const file = all[i];
      const pprof = i >= o.files.length + o.reject.length ? o.pprof[i - o.files.length - o.reject.length] : null;
      const mustLoad = i < o.files.length || pprof !== null;
      const shot = o.screenshots && mustLoad ? path.join(o.screenshots, `${i}-${path.basename(file)}.png`) : null;
      if (mustLoad && !pprof && o.skipEmpty) {
        const exp = expectation(file);
        if (!exp.error && exp.lanes.length === 0) {
          console.log(`skipped: ${file}: no X/B/E events (speedscope cannot open an empty trace)`);
          continue;
        }
      }
      const started = Date.now();
      const r = await openTrace(context, base, i, file, shot, timeoutMs, pprof && pprof.top);
      const secs = ((Date.now() - started) / 1000).toFixed(1);
      if (pprof && !r.problems.length) {
        passed += 1;
        console.log(`ok: ${file}: speedscope imports the pprof profile, top frame as expected (${secs}s)`);
      } else if (mustLoad && !r.problems.length) {
        passed += 1;
        console.log(`ok: ${file}: speedscope shows ${r.lanes} lane(s), ${r.stepped} checked (${secs}s)`);
      } else if (mustLoad) {
        failures += 1;
        console.log(`FAIL: ${file}: speedscope did not show it cleanly:`);
        for (const p of r.problems.slice(0, 10)) console.log(`    ${p}`);
      } else if (r.problems.length) {
        passed += 1;
        console.log(`ok: self-check ${file} rejected as expected: ${r.problems[0]}`);
      } else {
        failures += 1;
        console.log(`FAIL: self-check ${file} was expected to be rejected but loaded cleanly`);
      }
    }
  } finally {
    if (context) await context.close();
    server.close();
    fs.rmSync(profileDir, { recursive: true, force: true });
  }
  if (blocked.length) {
    failures += 1;
    console.log(`FAIL: the page tried to leave 127.0.0.1: ${blocked.slice(0, 3).join(', ')}`);
  }
  console.log(`viewer_test: ${passed} passed, ${failures} failed`);
  return failures ? 1 : 0;
}

main().then((code) => { process.exitCode = code; }, (e) => {
  console.error(`viewer_test: ${e.stack || e.message}`);
  process.exitCode = 2;
});
