#!/usr/bin/env node
// Compares what `go tool pprof` read from a tfprof pprof file with tfprof's
// own JSON result of the same query. Helper of pprof_consumer_test.sh; Node's
// standard library only.
//
// Usage: node pprof_check.js --view code|scope --select ATTR --json Q.json
//          --top TOP.txt --raw RAW.txt [--traces TRACES.txt] [--flame PAGE.html]
//          [--full-json FULL.json] [--samples N] [--expect-root]
//   --json       tfprof's `-output json` of the same query
//   --top        `go tool pprof -top -sample_index=1 -unit=us|B` output
//   --raw        `go tool pprof -raw` output (every sample, exact integers)
//   --traces     `go tool pprof -traces` output: stacks are checked too
//   --flame      the page `go tool pprof -http` serves at /ui/flamegraph
//   --full-json  code view: the unfiltered full-depth JSON of the same input
//                and attribute, to confirm no graph node sits on an
//                intermediate line (the premise of the code-view total)
//   --samples    the sample count tfprof reported when writing the file
//   --expect-root  the query shows the whole tree: pprof's total must also
//                equal the root's total
// Prints one line per mismatch; exit 1 if any, 0 otherwise.
//
// The expected pprof total, by the layout of g3doc/outputs.md:
//   scope view: one sample per displayed node that has a graph node, valued
//     at that node's own (self) value, so the total is the sum of `self`
//     over the displayed nodes (synthetic scopes have self 0); with the whole
//     tree displayed that is the root's total.
//   code view: one sample per graph node of the true leaves below each
//     displayed leaf, so the total is the sum of `total` over the displayed
//     leaves, provided no graph node was created on an intermediate line
//     (those are not sampled). --full-json checks that premise: in the full
//     tree every node with children has self 0.
'use strict';

const fs = require('fs');

const UNIT_OF = {
  micros: 'microseconds', accelerator_micros: 'microseconds', cpu_micros: 'microseconds',
  bytes: 'bytes', peak_bytes: 'bytes', residual_bytes: 'bytes', output_bytes: 'bytes',
  params: 'count', float_ops: 'count',
};
const TOP_SUFFIX = { microseconds: 'us', bytes: 'B', count: '' };

function parseArgs(argv) {
  const o = { expectRoot: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--expect-root') { o.expectRoot = true; continue; }
    const m = /^--(view|select|json|top|raw|traces|flame|full-json|samples)$/.exec(a);
    if (!m || i + 1 >= argv.length) throw new Error(`bad argument ${a}`);
    o[m[1].replace('-j', 'J')] = argv[++i];
  }
  for (const k of ['view', 'select', 'json', 'top', 'raw']) {
    if (!o[k]) throw new Error(`missing --${k}`);
  }
  if (!UNIT_OF[o.select]) throw new Error(`unknown attribute ${o.select}`);
  if (o.view !== 'code' && o.view !== 'scope') throw new Error(`unknown view ${o.view}`);
  return o;
}

// Walks the displayed tree (root excluded from `nodes`), recording paths.
function flatten(json, select) {
  const nodes = [];
  const walk = (n, path) => {
    const stat = n[select];
    if (!stat || !Number.isInteger(stat.self) || !Number.isInteger(stat.total)) {
      throw new Error(`JSON node ${JSON.stringify(n.name)} has no integer ${select}.self/total`);
    }
    const here = path.concat([n.name]);
    if (path.length) nodes.push({ name: n.name, self: stat.self, total: stat.total, leaf: n.children.length === 0, path: here.slice(1) });
    for (const c of n.children) walk(c, here);
  };
  walk(json.root, []);
  return { root: json.root[select].total, nodes };
}

// "Showing nodes accounting for 2881us, 100% of 2881us total" -> 2881.
function topTotal(text, unit) {
  const m = /^Showing nodes accounting for .*, [\d.]+% of (\S+) total$/m.exec(text);
  if (!m) return { error: 'no "Showing nodes accounting for ... of X total" line in -top output' };
  const suffix = TOP_SUFFIX[unit];
  const v = m[1];
  if (v === '0') return { value: 0 };  // pprof prints a zero without its unit
  if (!v.endsWith(suffix) || !/^-?\d+$/.test(v.slice(0, v.length - suffix.length))) {
    return { error: `-top total ${JSON.stringify(v)} is not an integer in ${unit} (unit suffix "${suffix}")` };
  }
  return { value: Number(v.slice(0, v.length - suffix.length)) };
}

// -raw: "count/count micros/microseconds" then per sample
// "   1   4292: 1 2 3" followed by its labels "graph node::[Conv2D]".
function rawSamples(text) {
  const lines = text.split('\n');
  const start = lines.findIndex((l) => l.trim() === 'Samples:');
  if (start < 0) return { error: 'no "Samples:" section in -raw output' };
  const header = (lines[start + 1] || '').trim().split(/\s+/);
  const samples = [];
  for (let i = start + 2; i < lines.length; i++) {
    const l = lines[i];
    let m;
    if ((m = /^\s+(-?\d+)\s+(-?\d+):((?:\s+\d+)*)\s*$/.exec(l))) {
      samples.push({ count: Number(m[1]), value: Number(m[2]), locs: m[3].trim().split(/\s+/).filter(Boolean), labels: [] });
    } else if ((m = /^\s+graph node::\[(.*)\]$/.exec(l)) && samples.length) {
      samples[samples.length - 1].labels.push(m[1]);
    } else if (/^\S/.test(l) || l.trim() === '') {
      break;  // next section (Locations, Mappings)
    } else {
      return { error: `unparsed -raw sample line ${JSON.stringify(l)}` };
    }
  }
  return { header, samples };
}

// -traces: blocks separated by "-----------+----..." lines; each has label
// lines ("graph node::  NAME"), then "<value>   <innermost frame>" and one
// frame per line below it.
function traces(text) {
  const blocks = text.split(/^-{5,}\+-+$/m).slice(1);
  const out = [];
  for (const b of blocks) {
    const lines = b.split('\n').filter((l) => l.trim() !== '');
    if (!lines.length) continue;
    const labels = [];
    const frames = [];
    for (const l of lines) {
      let m;
      if ((m = /^\s*graph node::\s+(.*)$/.exec(l))) labels.push(m[1]);
      else if (!frames.length && (m = /^\s*(\S+) {3}(.*)$/.exec(l))) frames.push(m[2]);
      else frames.push(l.trim());
    }
    out.push({ labels, frames });
  }
  return out;
}

// The flame graph page embeds its tree as `var data = JSON.parse("...")`.
function flameRoot(html) {
  const m = /JSON\.parse\("((?:[^"\\]|\\.)*)"\)/.exec(html);
  if (!m) return { error: 'no embedded JSON.parse("...") data in the flame graph page' };
  const literal = m[1].replace(/\\x([0-9a-fA-F]{2})/g, '\\u00$1');
  const data = JSON.parse(JSON.parse(`"${literal}"`));
  if (!Number.isFinite(data.v)) return { error: 'flame graph root has no numeric value' };
  return { value: data.v, name: data.n };
}

// Code view: JSON names are "<file base>:<line>:<function, cut to 17 chars
// and '...' when 20 or longer>[ (gradient)]"; pprof functions are
// "<file base without extension>:<function>[ (gradient)]" (the gradient
// suffix is part of the function name, as in tfprof). Only the function
// part is compared: a pprof location is keyed by (caller file, caller line,
// callee function), as in tfprof, so when one call site reaches two
// functions of the same name in different files (a polymorphic method), both
// stacks show the file of whichever was recorded first.
function codeFrameMatches(jsonName, pprofName) {
  const grad = / \(gradient\)$/.test(jsonName) ? ' (gradient)' : '';
  if (!pprofName.endsWith(grad)) return false;
  const m = /^(.*?):(-?\d+):(.*)$/.exec(jsonName.slice(0, jsonName.length - grad.length));
  if (!m) return false;
  const fn = m[3];
  const colon = pprofName.indexOf(':');
  if (colon <= 0) return false;
  const pfn = pprofName.slice(colon + 1, pprofName.length - grad.length);
  if (fn.length === 20 && fn.endsWith('...')) return pfn.length >= 20 && pfn.startsWith(fn.slice(0, 17));
  return pfn === fn;
}

function main() {
  const o = parseArgs(process.argv.slice(2));
  const bad = [];
  const unit = UNIT_OF[o.select];
  const tree = flatten(JSON.parse(fs.readFileSync(o.json, 'utf8')), o.select);
  const sum = (xs, f) => xs.reduce((a, x) => a + f(x), 0);

  let expected;
  let why;
  if (o.view === 'scope') {
    expected = sum(tree.nodes, (n) => n.self);
    why = 'sum of self over the displayed nodes';
  } else {
    expected = sum(tree.nodes.filter((n) => n.leaf), (n) => n.total);
    why = 'sum of total over the displayed leaves';
    if (!o.fullJson) {
      bad.push('code view needs --full-json to confirm its premise');
    } else {
      const full = flatten(JSON.parse(fs.readFileSync(o.fullJson, 'utf8')), o.select);
      const inner = full.nodes.filter((n) => !n.leaf && n.self !== 0);
      if (inner.length) {
        bad.push(`premise broken: ${inner.length} code line(s) with children have their own ${o.select} ` +
          `(e.g. ${JSON.stringify(inner[0].name)} self=${inner[0].self}); pprof does not sample those, ` +
          'so the displayed totals no longer predict the pprof total');
      }
    }
  }
  if (o.expectRoot && expected !== tree.root) {
    bad.push(`tfprof JSON: ${why} = ${expected}, but the root total is ${tree.root} (query is not unfiltered?)`);
  }

  const top = topTotal(fs.readFileSync(o.top, 'utf8'), unit);
  if (top.error) bad.push(top.error);
  else if (top.value !== expected) bad.push(`pprof -top total ${top.value} != tfprof ${why} ${expected}`);
  else if (o.expectRoot && top.value !== tree.root) bad.push(`pprof -top total ${top.value} != tfprof root total ${tree.root}`);

  const raw = rawSamples(fs.readFileSync(o.raw, 'utf8'));
  if (raw.error) {
    bad.push(raw.error);
  } else {
    const wantHeader = ['count/count', `${o.select}/${unit}`];
    if (raw.header.join(' ') !== wantHeader.join(' ')) {
      bad.push(`pprof -raw sample types ${JSON.stringify(raw.header.join(' '))} != ${JSON.stringify(wantHeader.join(' '))}`);
    }
    const rawTotal = sum(raw.samples, (s) => s.value);
    const rawCount = sum(raw.samples, (s) => s.count);
    if (rawTotal !== expected) bad.push(`pprof -raw samples add up to ${rawTotal} != tfprof ${why} ${expected}`);
    if (o.samples !== undefined && rawCount !== Number(o.samples)) {
      bad.push(`pprof -raw has ${rawCount} samples, tfprof said it wrote ${o.samples}`);
    }
    for (const s of raw.samples) {
      if (s.count !== 1) bad.push(`pprof -raw sample ${JSON.stringify(s.labels)} has count ${s.count}, want 1`);
      if (s.labels.length !== 1) bad.push(`pprof -raw sample with value ${s.value} has ${s.labels.length} graph node labels, want 1`);
    }
    if (o.view === 'scope') {
      // Each sample is one displayed node: its value is that node's self.
      const byName = new Map(tree.nodes.map((n) => [n.name, n]));
      const seen = new Set();
      for (const s of raw.samples) {
        const name = s.labels[0];
        const n = byName.get(name);
        if (!n) { bad.push(`pprof sample ${JSON.stringify(name)} is not a displayed node`); continue; }
        if (seen.has(name)) bad.push(`pprof has two samples for ${JSON.stringify(name)}`);
        seen.add(name);
        if (s.value !== n.self) bad.push(`pprof sample ${JSON.stringify(name)} = ${s.value}, tfprof self = ${n.self}`);
      }
      for (const n of tree.nodes) {
        if (n.self !== 0 && !seen.has(n.name)) bad.push(`displayed node ${JSON.stringify(n.name)} (self ${n.self}) has no pprof sample`);
      }
    }
  }

  if (o.traces) {
    const ts = traces(fs.readFileSync(o.traces, 'utf8'));
    if (!raw.error && ts.length !== raw.samples.length) {
      bad.push(`pprof -traces shows ${ts.length} traces, -raw ${raw.samples.length} samples`);
    }
    if (o.view === 'scope') {
      // Stack, innermost first: the node, then its displayed ancestors.
      const byName = new Map(tree.nodes.map((n) => [n.name, n]));
      for (const t of ts) {
        const n = byName.get(t.labels[0]);
        if (!n) { bad.push(`pprof trace ${JSON.stringify(t.labels)} is not a displayed node`); continue; }
        const want = n.path.slice().reverse();
        if (t.frames.join('\n') !== want.join('\n')) {
          bad.push(`pprof trace of ${JSON.stringify(n.name)} is ${JSON.stringify(t.frames)}, want ${JSON.stringify(want)}`);
        }
      }
    } else {
      // Stack, innermost first: the functions of the displayed path from the
      // leaf up to (not including) the top-level line, which is the caller
      // of the first frame.
      const leaves = tree.nodes.filter((n) => n.leaf);
      const byDepth = new Map();
      for (const l of leaves) {
        const d = l.path.length - 1;
        if (!byDepth.has(d)) byDepth.set(d, []);
        byDepth.get(d).push(l);
      }
      const used = new Set();
      for (const t of ts) {
        const cands = byDepth.get(t.frames.length) || [];
        const hit = cands.find((l) => {
          const want = l.path.slice(1).reverse();
          return want.every((j, i) => codeFrameMatches(j, t.frames[i]));
        });
        if (!hit) bad.push(`pprof trace of ${JSON.stringify(t.labels)} (${JSON.stringify(t.frames.slice(0, 3))}...) matches no displayed leaf's call path`);
        else used.add(hit);
      }
      const unused = leaves.filter((l) => !used.has(l) && l.total !== 0);
      // A leaf of zero total may have no graph node below it; one with a
      // non-zero total must show up as some trace (possibly sharing the
      // stack of another leaf whose functions match).
      for (const l of unused) {
        const want = l.path.slice(1).reverse();
        const any = ts.some((t) => t.frames.length === want.length && want.every((j, i) => codeFrameMatches(j, t.frames[i])));
        if (!any) bad.push(`displayed leaf ${JSON.stringify(l.path.join(' > '))} (total ${l.total}) has no pprof trace`);
      }
    }
  }

  if (o.flame) {
    const f = flameRoot(fs.readFileSync(o.flame, 'utf8'));
    if (f.error) bad.push(f.error);
    else if (f.value !== expected) bad.push(`pprof -http flame graph root = ${f.value} != tfprof ${why} ${expected}`);
  }

  for (const b of bad.slice(0, 50)) console.log(b);
  if (bad.length > 50) console.log(`... ${bad.length - 50} more`);
  if (!bad.length) console.log(`ok: pprof total ${expected} = tfprof ${why}${o.expectRoot ? ' = root total' : ''}`);
  return bad.length ? 1 : 0;
}

try {
  process.exitCode = main();
} catch (e) {
  console.log(`pprof_check: ${e.message}`);
  process.exitCode = 2;
}
