'use strict';
// Memory and cold start of the edge function per routing table size,
// measured on the package the router stack ships.
//
// For each override count it writes a routing table of the demo fleet's
// cells with that many overrides (36-byte UUID-style tenant ids, a tenth
// migrating with writes rejected), has `cellctl router package` write the
// function package from it — the command writes exactly what the router
// program ships, so this tool cannot drift from it — and loads the
// package's index.js in a fresh node process per run, as Lambda does on a
// cold start:
//   image      bytes of the routing image
//   package    bytes of the whole package; zip: deflated (what Lambda counts)
//   cold ms    require(index.js): reading config.json and the image, the
//              checksum and the checks, median of runs
//   start ms   the whole process, spawn to a handler ready (node's own
//              start included), median of runs
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
const { buildPackage, cleanup } = require('./packagekit');

const counts = process.argv.slice(2).map(Number).filter((n) => n >= 0);
if (counts.length === 0) counts.push(0, 1000, 10000, 100000, 200000, 500000, 1000000);
const RUNS = Number(process.env.RUNS) || 5;

// The child: load the package like the Lambda runtime, report numbers.
const CHILD = `
const t0 = process.hrtime.bigint();
const { handler } = require(process.argv[1] + '/index.js');
const ms = Number(process.hrtime.bigint() - t0) / 1e6;
if (typeof handler !== 'function' || handler.loadError) throw handler.loadError || new Error('no handler');
global.gc();
const rss = process.memoryUsage().rss;
const peak = process.resourceUsage().maxRSS * 1024;
process.stdout.write(JSON.stringify({ ms, rss, peak }));
`;
const EMPTY = `global.gc(); process.stdout.write(JSON.stringify({ rss: process.memoryUsage().rss, peak: process.resourceUsage().maxRSS * 1024 }));`;

function child(script, dir) {
  const t0 = process.hrtime.bigint();
  const out = execFileSync(process.execPath, ['--expose-gc', '-e', script, dir], { maxBuffer: 1 << 20 });
  return Object.assign(JSON.parse(out), { start: Number(process.hrtime.bigint() - t0) / 1e6 });
}

const median = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const MiB = (b) => (b / (1 << 20)).toFixed(1);

function zipBytes(dir) {
  let n = 0;
  for (const f of fs.readdirSync(dir)) n += zlib.deflateRawSync(fs.readFileSync(path.join(dir, f)), { level: 9 }).length;
  return n;
}

const bases = [];
for (let i = 0; i < RUNS; i++) bases.push(child(EMPTY, '.'));
const base = { rss: median(bases.map((b) => b.rss)), peak: median(bases.map((b) => b.peak)), start: median(bases.map((b) => b.start)) };
console.log(`node ${process.version}, ${os.cpus()[0].model}, load ${os.loadavg()[0].toFixed(1)}, empty node: RSS ${MiB(base.rss)} MiB, start ${base.start.toFixed(0)} ms`);
console.log('overrides   image MiB   package MiB   zip MiB   cold ms   start ms   rss MiB   peak MiB');
for (const n of counts) {
  const pkg = buildPackage(n);
  try {
    const runs = [];
    for (let i = 0; i < RUNS; i++) runs.push(child(CHILD, pkg.dir));
    console.log(
      [
        String(n).padStart(9),
        MiB(pkg.report.imageBytes).padStart(11),
        MiB(pkg.report.packageBytes).padStart(13),
        MiB(zipBytes(pkg.dir)).padStart(9),
        median(runs.map((r) => r.ms)).toFixed(1).padStart(9),
        median(runs.map((r) => r.start)).toFixed(0).padStart(10),
        MiB(median(runs.map((r) => r.rss)) - base.rss).padStart(9),
        MiB(median(runs.map((r) => r.peak)) - base.peak).padStart(10),
      ].join(' '),
    );
  } finally {
    cleanup(pkg);
  }
}
