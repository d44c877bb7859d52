#!/usr/bin/env node
// Structural check of Chrome Trace Event Format files (the JSON that
// chrome://tracing, Perfetto and speedscope import). Node's standard library
// only, so it runs without `npm ci`.
//
// Usage: node trace_check.js [options] FILE...
//   --allow-nesting   X events on one lane may nest (one inside another);
//                     partial overlaps are still violations. Default: the
//                     slices of a lane (same pid and tid) must not overlap.
//   --min-events=N    fewer than N X/B events is a violation (default 0).
//   --max-report=N    print at most N violation lines per file (default 200;
//                     the count line still reports all of them).
//   --quiet           print nothing for files that pass.
//   --allow-string-counter=NAME
//                     counters (C) named NAME may carry non-numeric values
//                     (counted as "tolerated" instead of violations). For
//                     the "Top Allocations" counter that tfprof's graph-view
//                     timeline inherits from TensorFlow's tfprof, whose values
//                     are strings like "0.00128 MB from DW".
// FILE may be gzipped. Exit status: 0 every file passed, 1 a violation
// (one line per violation on stdout), 2 usage error.
//
// What is checked, per phase:
//   top level   a JSON array of events, or an object whose traceEvents is an
//               array; displayTimeUnit, if present, is "ms" or "ns".
//   every event an object with a string ph of a known phase; name and cat,
//               if present, are strings; args, if present, is an object;
//               pid and tid, if present, are integers or strings; ts, if
//               present, is a finite number.
//   X           name, ts, dur >= 0, pid, tid.
//   B / E       B: name, ts, pid, tid; E: ts, pid, tid; on each lane every E
//               closes an open B and no B is left open.
//   M           pid; process_name / thread_name need args.name (a string),
//               thread_* need tid, *_sort_index need a numeric
//               args.sort_index; one pid or lane is not given two names.
//   s / t / f   (flow v1) name, id, ts, pid, tid. In time order, per id: an
//               s opens a flow (not while one with that id is open), t and f
//               continue it and f closes it; each t/f has an open s before
//               it with the same cat and name; each s is followed by at
//               least one t or f. The s lies inside an X slice of its lane;
//               a t/f lies inside one (bp "e") or before the start of a
//               later one (next-slice binding).
//   C           name, ts, pid, and args with at least one value, all finite
//               numbers.
//   N / O / D   (objects) name, id, ts, pid; per (name, id), in time order:
//               N while not alive, O and D only while alive; O needs
//               args.snapshot.
//   i / I / R   name, ts, pid; scope s, if present, is g, p or t.
//   lanes       the X events of one (pid, tid) never overlap (or, with
//               --allow-nesting, only nest properly).
'use strict';

const fs = require('fs');
const zlib = require('zlib');

const KNOWN_PHASES = new Set([
  'B', 'E', 'X', 'i', 'I', 'C', 'b', 'n', 'e', 'S', 'T', 'p', 'F', 's', 't',
  'f', 'P', 'N', 'O', 'D', 'M', 'V', 'v', 'R', 'c', '(', ')',
]);

function describe(ev, idx) {
  let s = `event #${idx}`;
  if (ev && typeof ev === 'object' && !Array.isArray(ev)) {
    const parts = [];
    if (typeof ev.ph === 'string') parts.push(`ph=${ev.ph}`);
    if (typeof ev.name === 'string') parts.push(`name=${JSON.stringify(ev.name.slice(0, 80))}`);
    if (parts.length) s += ` (${parts.join(', ')})`;
  }
  return s;
}

const isFiniteNumber = (v) => typeof v === 'number' && Number.isFinite(v);
const isId = (v) => (typeof v === 'number' && Number.isInteger(v)) || typeof v === 'string';
const isPlainObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const laneKey = (ev) => `${ev.pid}\u0000${ev.tid}`;
const laneName = (ev) => `pid ${JSON.stringify(ev.pid)} tid ${JSON.stringify(ev.tid)}`;

// Returns a list of violation strings for one parsed trace.
function checkTrace(root, opts) {
  const out = [];
  let events;
  if (Array.isArray(root)) {
    events = root;
  } else if (isPlainObject(root)) {
    if (!Array.isArray(root.traceEvents)) {
      out.push('top level: an object without a traceEvents array');
      return { violations: out, counts: {} };
    }
    events = root.traceEvents;
    if ('displayTimeUnit' in root && root.displayTimeUnit !== 'ms' && root.displayTimeUnit !== 'ns') {
      out.push(`top level: displayTimeUnit ${JSON.stringify(root.displayTimeUnit)} is not "ms" or "ns"`);
    }
  } else {
    out.push('top level: neither an array of events nor an object with traceEvents');
    return { violations: out, counts: {} };
  }

  const counts = {};
  let tolerated = 0;
  const lanes = new Map();          // lane key -> [{ts, end, idx}] of X events
  const beLanes = new Map();        // lane key -> [{ev, idx}] of B/E events
  const flows = [];                 // {ev, idx}
  const objects = [];               // {ev, idx}
  const processNames = new Map();   // pid -> name
  const threadNames = new Map();    // lane key -> name

  const need = (ev, idx, field, ok, what) => {
    if (!(field in ev)) {
      out.push(`${describe(ev, idx)}: missing ${field}`);
      return false;
    }
    if (!ok(ev[field])) {
      out.push(`${describe(ev, idx)}: ${field} ${JSON.stringify(ev[field])} is not ${what}`);
      return false;
    }
    return true;
  };
  const needName = (ev, idx) => need(ev, idx, 'name', (v) => typeof v === 'string', 'a string');
  const needTs = (ev, idx) => need(ev, idx, 'ts', isFiniteNumber, 'a finite number');
  const needPid = (ev, idx) => need(ev, idx, 'pid', isId, 'an integer or a string');
  const needTid = (ev, idx) => need(ev, idx, 'tid', isId, 'an integer or a string');

  events.forEach((ev, idx) => {
    if (!isPlainObject(ev)) {
      out.push(`event #${idx}: not an object`);
      return;
    }
    if (typeof ev.ph !== 'string') {
      out.push(`${describe(ev, idx)}: missing ph (phase)`);
      return;
    }
    counts[ev.ph] = (counts[ev.ph] || 0) + 1;
    if (!KNOWN_PHASES.has(ev.ph)) {
      out.push(`${describe(ev, idx)}: unknown phase ${JSON.stringify(ev.ph)}`);
      return;
    }
    // Generic field types (required-ness is per phase below).
    if ('name' in ev && typeof ev.name !== 'string') out.push(`${describe(ev, idx)}: name is not a string`);
    if ('cat' in ev && typeof ev.cat !== 'string') out.push(`${describe(ev, idx)}: cat is not a string`);
    if ('args' in ev && !isPlainObject(ev.args)) out.push(`${describe(ev, idx)}: args is not an object`);
    if ('pid' in ev && !isId(ev.pid)) out.push(`${describe(ev, idx)}: pid ${JSON.stringify(ev.pid)} is not an integer or a string`);
    if ('tid' in ev && !isId(ev.tid)) out.push(`${describe(ev, idx)}: tid ${JSON.stringify(ev.tid)} is not an integer or a string`);
    if ('ts' in ev && !isFiniteNumber(ev.ts)) out.push(`${describe(ev, idx)}: ts ${JSON.stringify(ev.ts)} is not a finite number`);
    const args = isPlainObject(ev.args) ? ev.args : undefined;

    switch (ev.ph) {
      case 'X': {
        const ok = [needName(ev, idx), needTs(ev, idx), needPid(ev, idx), needTid(ev, idx),
          need(ev, idx, 'dur', (v) => isFiniteNumber(v) && v >= 0, 'a finite number >= 0')];
        if (ok.every(Boolean)) {
          const key = laneKey(ev);
          if (!lanes.has(key)) lanes.set(key, []);
          lanes.get(key).push({ ts: ev.ts, end: ev.ts + ev.dur, idx, ev });
        }
        break;
      }
      case 'B':
      case 'E': {
        const ok = [ev.ph === 'B' ? needName(ev, idx) : true, needTs(ev, idx), needPid(ev, idx), needTid(ev, idx)];
        if (ok.every(Boolean)) {
          const key = laneKey(ev);
          if (!beLanes.has(key)) beLanes.set(key, []);
          beLanes.get(key).push({ ev, idx });
        }
        break;
      }
      case 'M': {
        if (!needName(ev, idx) || !needPid(ev, idx)) break;
        if (ev.name.startsWith('thread_') && !needTid(ev, idx)) break;
        if (ev.name === 'process_name' || ev.name === 'thread_name') {
          if (!args || typeof args.name !== 'string') {
            out.push(`${describe(ev, idx)}: ${ev.name} needs args.name (a string)`);
            break;
          }
          const map = ev.name === 'process_name' ? processNames : threadNames;
          const key = ev.name === 'process_name' ? String(ev.pid) : laneKey(ev);
          if (map.has(key) && map.get(key) !== args.name) {
            out.push(`${describe(ev, idx)}: ${ev.name === 'process_name' ? `pid ${JSON.stringify(ev.pid)}` : laneName(ev)} is named twice (${JSON.stringify(map.get(key))} and ${JSON.stringify(args.name)})`);
          }
          map.set(key, args.name);
        } else if (ev.name === 'process_sort_index' || ev.name === 'thread_sort_index') {
          if (!args || !isFiniteNumber(args.sort_index)) {
            out.push(`${describe(ev, idx)}: ${ev.name} needs a numeric args.sort_index`);
          }
        }
        break;
      }
      case 's':
      case 't':
      case 'f': {
        const ok = [needName(ev, idx), need(ev, idx, 'id', isId, 'an integer or a string'),
          needTs(ev, idx), needPid(ev, idx), needTid(ev, idx)];
        if (ok.every(Boolean)) flows.push({ ev, idx });
        break;
      }
      case 'C': {
        const ok = [needName(ev, idx), needTs(ev, idx), needPid(ev, idx)];
        if (!ok.every(Boolean)) break;
        if (!args || Object.keys(args).length === 0) {
          out.push(`${describe(ev, idx)}: counter without args values`);
          break;
        }
        for (const [k, v] of Object.entries(args)) {
          if (isFiniteNumber(v)) continue;
          if (opts.stringCounters.has(ev.name)) tolerated += 1;
          else out.push(`${describe(ev, idx)}: counter value args.${k} = ${JSON.stringify(v)} is not a finite number`);
        }
        break;
      }
      case 'N':
      case 'O':
      case 'D': {
        const ok = [needName(ev, idx), need(ev, idx, 'id', isId, 'an integer or a string'),
          needTs(ev, idx), needPid(ev, idx)];
        if (!ok.every(Boolean)) break;
        if (ev.ph === 'O' && (!args || !('snapshot' in args))) {
          out.push(`${describe(ev, idx)}: object snapshot without args.snapshot`);
        }
        objects.push({ ev, idx });
        break;
      }
      case 'i':
      case 'I':
      case 'R': {
        needName(ev, idx);
        needTs(ev, idx);
        needPid(ev, idx);
        if ('s' in ev && !['g', 'p', 't'].includes(ev.s)) {
          out.push(`${describe(ev, idx)}: instant scope s ${JSON.stringify(ev.s)} is not g, p or t`);
        }
        break;
      }
      default:
        break;  // known phases this checker does not inspect further
    }
  });

  // Lanes of X events: sort by start, longer first on ties.
  for (const slices of lanes.values()) {
    slices.sort((a, b) => a.ts - b.ts || b.end - a.end || a.idx - b.idx);
    if (!opts.allowNesting) {
      let prev = null;
      for (const s of slices) {
        if (prev && s.ts < prev.end) {
          out.push(`${describe(s.ev, s.idx)}: overlaps ${describe(prev.ev, prev.idx)} on lane ${laneName(s.ev)} ` +
            `([${s.ts}, ${s.end}] starts before [${prev.ts}, ${prev.end}] ends)`);
        }
        if (!prev || s.end > prev.end) prev = s;
      }
    } else {
      const stack = [];
      for (const s of slices) {
        while (stack.length && stack[stack.length - 1].end <= s.ts) stack.pop();
        const top = stack[stack.length - 1];
        if (top && s.end > top.end) {
          out.push(`${describe(s.ev, s.idx)}: partially overlaps ${describe(top.ev, top.idx)} on lane ${laneName(s.ev)} ` +
            `([${s.ts}, ${s.end}] vs [${top.ts}, ${top.end}])`);
          continue;
        }
        stack.push(s);
      }
    }
  }

  // B/E pairing per lane, in time order (file order on ties).
  for (const list of beLanes.values()) {
    list.sort((a, b) => a.ev.ts - b.ev.ts || a.idx - b.idx);
    const stack = [];
    for (const { ev, idx } of list) {
      if (ev.ph === 'B') {
        stack.push({ ev, idx });
      } else if (!stack.length) {
        out.push(`${describe(ev, idx)}: E on lane ${laneName(ev)} with no open B`);
      } else {
        const open = stack.pop();
        if (typeof ev.name === 'string' && ev.name !== open.ev.name) {
          out.push(`${describe(ev, idx)}: E closes ${describe(open.ev, open.idx)} of another name`);
        }
      }
    }
    for (const { ev, idx } of stack) out.push(`${describe(ev, idx)}: B on lane ${laneName(ev)} is never closed`);
  }

  // Flows, in time order (file order on ties).
  flows.sort((a, b) => a.ev.ts - b.ev.ts || a.idx - b.idx);
  const openFlows = new Map();  // id -> {ev, idx, steps}
  const bound = (ev, enclosingOnly) => {
    const slices = lanes.get(laneKey(ev)) || [];
    return slices.some((s) => (s.ts <= ev.ts && ev.ts <= s.end) || (!enclosingOnly && s.ts >= ev.ts));
  };
  for (const { ev, idx } of flows) {
    const id = JSON.stringify(ev.id);
    if (ev.ph === 's') {
      if (openFlows.has(id)) {
        out.push(`${describe(ev, idx)}: flow id ${id} starts again while ${describe(openFlows.get(id).ev, openFlows.get(id).idx)} is open`);
      }
      openFlows.set(id, { ev, idx, steps: 0 });
      if (!bound(ev, true)) out.push(`${describe(ev, idx)}: flow start id ${id} at ts ${ev.ts} is not inside an X slice of lane ${laneName(ev)}`);
      continue;
    }
    const start = openFlows.get(id);
    if (!start) {
      out.push(`${describe(ev, idx)}: flow ${ev.ph} id ${id} has no flow start (s) before it`);
      continue;
    }
    if ((ev.cat || '') !== (start.ev.cat || '') || ev.name !== start.ev.name) {
      out.push(`${describe(ev, idx)}: flow ${ev.ph} id ${id} has cat/name ${JSON.stringify([ev.cat, ev.name])}, its start has ${JSON.stringify([start.ev.cat, start.ev.name])}`);
    }
    if (!bound(ev, ev.bp === 'e')) out.push(`${describe(ev, idx)}: flow ${ev.ph} id ${id} at ts ${ev.ts} binds to no X slice of lane ${laneName(ev)}`);
    start.steps += 1;
    if (ev.ph === 'f') openFlows.delete(id);
  }
  for (const [id, start] of openFlows) {
    if (start.steps === 0) out.push(`${describe(start.ev, start.idx)}: flow start id ${id} has no matching t or f`);
  }

  // Object lifecycles, in time order (file order on ties).
  objects.sort((a, b) => a.ev.ts - b.ev.ts || a.idx - b.idx);
  const alive = new Set();
  for (const { ev, idx } of objects) {
    const key = `${ev.name}\u0000${JSON.stringify(ev.id)}`;
    if (ev.ph === 'N') {
      if (alive.has(key)) out.push(`${describe(ev, idx)}: object id ${JSON.stringify(ev.id)} created again while alive`);
      alive.add(key);
    } else if (!alive.has(key)) {
      out.push(`${describe(ev, idx)}: object ${ev.ph === 'O' ? 'snapshot' : 'deletion'} of id ${JSON.stringify(ev.id)} that is not alive (no N before it)`);
    } else if (ev.ph === 'D') {
      alive.delete(key);
    }
  }

  const sliceCount = (counts.X || 0) + (counts.B || 0);
  if (sliceCount < opts.minEvents) {
    out.push(`top level: ${sliceCount} X/B events, fewer than the ${opts.minEvents} required`);
  }
  return { violations: out, counts, tolerated };
}

function readTrace(file) {
  let buf = fs.readFileSync(file);
  if (buf.length >= 2 && buf[0] === 0x1f && buf[1] === 0x8b) buf = zlib.gunzipSync(buf);
  return JSON.parse(buf.toString('utf8'));
}

function main(argv) {
  const opts = { allowNesting: false, minEvents: 0, maxReport: 200, quiet: false, stringCounters: new Set() };
  const files = [];
  for (const a of argv) {
    let m;
    if (a === '--allow-nesting') opts.allowNesting = true;
    else if (a === '--quiet') opts.quiet = true;
    else if ((m = /^--min-events=(\d+)$/.exec(a))) opts.minEvents = Number(m[1]);
    else if ((m = /^--max-report=(\d+)$/.exec(a))) opts.maxReport = Number(m[1]);
    else if ((m = /^--allow-string-counter=(.+)$/.exec(a))) opts.stringCounters.add(m[1]);
    else if (a.startsWith('-')) {
      process.stderr.write(`trace_check: unknown option ${a}\n`);
      return 2;
    } else files.push(a);
  }
  if (!files.length) {
    process.stderr.write('usage: trace_check.js [--allow-nesting] [--min-events=N] [--max-report=N] [--quiet] [--allow-string-counter=NAME] FILE...\n');
    return 2;
  }
  let failed = 0;
  for (const file of files) {
    let result;
    try {
      result = checkTrace(readTrace(file), opts);
    } catch (e) {
      result = { violations: [`not a readable JSON trace: ${e.message.split('\n')[0]}`], counts: {} };
    }
    const v = result.violations;
    if (v.length) {
      failed += 1;
      for (const line of v.slice(0, opts.maxReport)) console.log(`${file}: ${line}`);
      if (v.length > opts.maxReport) console.log(`${file}: ... ${v.length - opts.maxReport} more`);
      console.log(`trace_check: FAIL ${file}: ${v.length} violation(s)`);
    } else if (!opts.quiet) {
      const summary = Object.entries(result.counts).map(([k, n]) => `${k}=${n}`).join(' ');
      const note = result.tolerated ? `; ${result.tolerated} non-numeric counter value(s) tolerated` : '';
      console.log(`trace_check: ok ${file} (${summary || 'no events'}${note})`);
    }
  }
  return failed ? 1 : 0;
}

module.exports = { checkTrace, readTrace };

if (require.main === module) process.exitCode = main(process.argv.slice(2));
