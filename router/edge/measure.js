'use strict';
// Memory and cold start of the edge function per routing table size.
//
// For each override count it writes the config.json Go would render (the
// same shape as edge.Config: 36-byte UUID-style tenant ids, one line per
// override, a tenth migrating with rejectWrites) into a temp function
// package, then loads index.js in a fresh node process, as Lambda does on a
// cold start, and reports:
//   config     bytes of config.json
//   zip        deflate-compressed size (what the Lambda package limit counts)
//   cold ms    require(index.js): JSON.parse + compile, median of runs
//   rss MiB    process RSS after the load and a forced GC, minus an empty node
//   peak MiB   peak RSS during the load (getrusage maxrss), minus an empty node
//
//   node --expose-gc router/edge/measure.js [counts…]
// The numbers go into docs/BENCHMARKS.md and the limits in router/edge/limits.go.
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const zlib = require('node:zlib');

const counts = process.argv.slice(2).map(Number).filter((n) => n >= 0);
if (counts.length === 0) counts.push(0, 1000, 10000, 50000, 100000, 200000, 500000, 1000000);
const RUNS = Number(process.env.RUNS) || 3;

function config(n) {
  const cells = Array.from({ length: 16 }, (_, i) => `cell-${String.fromCharCode(97 + i)}`);
  const bucketRuns = [];
  for (let b = 0; b < 1024; b += 64) bucketRuns.push(64, (b / 64) % cells.length);
  const origins = cells.map((c) => `"${c}": "${c}-1234567890.us-east-1.elb.amazonaws.com"`).join(', ');
  const lines = [];
  let x = 0x9e3779b9; // xorshift32: random-looking ids compress like real UUIDs
  const hex = (k) => {
    let s = '';
    while (s.length < k) {
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      s += (x >>> 0).toString(16).padStart(8, '0');
    }
    return s.slice(0, k);
  };
  for (let i = 0; i < n; i++) {
    const u = hex(20) + i.toString(16).padStart(12, '0'); // unique
    const tenant = `${u.slice(0, 8)}-${u.slice(8, 12)}-${u.slice(12, 16)}-${u.slice(16, 20)}-${u.slice(20)}`; // 36 bytes
    const cell = cells[i % cells.length];
    lines.push(i % 10 === 0 ? `"${tenant}": {"cell": "${cell}", "rejectWrites": true}` : `"${tenant}": {"cell": "${cell}"}`);
  }
  return (
    '{\n"format": 1,\n"version": 7,\n"buckets": 1024,\n"tenantHeader": "x-tenant-id",\n"retryAfterSeconds": 30,\n' +
    `"cells": [${cells.map((c) => `"${c}"`).join(', ')}],\n"origins": {${origins}},\n` +
    `"bucketRuns": [${bucketRuns.join(', ')}],\n"overrides": {\n${lines.join(',\n')}\n}\n}\n`
  );
}

// The child: load the package like the Lambda runtime, report numbers.
const CHILD = `
const t0 = process.hrtime.bigint();
const { handler } = require(process.argv[1] + '/index.js');
const ms = Number(process.hrtime.bigint() - t0) / 1e6;
global.gc();
const rss = process.memoryUsage().rss;
const peak = process.resourceUsage().maxRSS * 1024;
if (typeof handler !== 'function') throw new Error('no handler');
process.stdout.write(JSON.stringify({ ms, rss, peak }));
`;
const EMPTY = `global.gc(); process.stdout.write(JSON.stringify({ rss: process.memoryUsage().rss, peak: process.resourceUsage().maxRSS * 1024 }));`;

function child(script, dir) {
  const out = execFileSync(process.execPath, ['--expose-gc', '-e', script, dir], { maxBuffer: 1 << 20 });
  return JSON.parse(out);
}

const median = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const MiB = (b) => (b / (1 << 20)).toFixed(1);

const base = child(EMPTY, '.');
console.log(`node ${process.version}, ${os.cpus()[0].model}, empty node RSS ${MiB(base.rss)} MiB`);
console.log('overrides   config MiB   zip MiB   cold ms   rss MiB   peak MiB');
for (const n of counts) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'edge-measure-'));
  try {
    for (const f of ['index.js', 'routing.js', 'lanes.js']) fs.copyFileSync(path.join(__dirname, f), path.join(dir, f));
    const cfg = config(n);
    fs.writeFileSync(path.join(dir, 'config.json'), cfg);
    const zip = zlib.deflateRawSync(cfg, { level: 9 }).length;
    const runs = [];
    for (let i = 0; i < RUNS; i++) runs.push(child(CHILD, dir));
    console.log(
      [
        String(n).padStart(9),
        MiB(cfg.length).padStart(12),
        MiB(zip).padStart(9),
        median(runs.map((r) => r.ms)).toFixed(0).padStart(9),
        MiB(median(runs.map((r) => r.rss)) - base.rss).padStart(9),
        MiB(median(runs.map((r) => r.peak)) - base.peak).padStart(10),
      ].join(' '),
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
