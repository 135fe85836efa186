'use strict';
// What lanes add to a request at the edge: the same realistic table as
// bench.js with and without per-cell lane layouts, and the lane
// computation alone (mix64, rank, unrank, header string) per tenant.
// Goal: lanes add ≤ 1 µs to a route.
//
//   node router/edge/bench_lanes.js [iterations]
const { compile, handleRequest, scanTenant, fnv1a64Hex } = require('./routing');
const { layout, lanesValue } = require('./lanes');
const { event } = require('./testkit');

const N = Number(process.argv[2]) || 1_000_000;

function config(lanes) {
  const cells = Array.from({ length: 8 }, (_, i) => `cell-${String.fromCharCode(97 + i)}`);
  const bucketRuns = [];
  for (let b = 0; b < 1024; b += 32) bucketRuns.push(32, (b / 32) % 8);
  const origins = {};
  for (const c of cells) origins[c] = `${c}-1234567890.us-east-1.elb.amazonaws.com`;
  const cfg = { format: 1, version: 7, buckets: 1024, tenantHeader: 'x-tenant-id', retryAfterSeconds: 30, cells, origins, bucketRuns, overrides: {} };
  if (lanes) cfg.lanes = Object.fromEntries(cells.map((c) => [c, lanes]));
  return cfg;
}

function time(label, fn) {
  for (let i = 0; i < 200_000; i++) fn(i); // warm up the JIT
  const start = process.hrtime.bigint();
  for (let i = 0; i < N; i++) fn(i);
  const ns = Number(process.hrtime.bigint() - start) / N;
  console.log(`${label.padEnd(48)} ${ns.toFixed(0).padStart(6)} ns/op`);
  return ns;
}

const evs = [];
for (let i = 0; i < 10_000; i++) evs.push(event('GET', [['X-Tenant-Id', `tenant-${(i * 7919) % 100000}`]]));
const hashes = [];
for (let i = 0; i < 1024; i++) {
  const hex = fnv1a64Hex(`tenant-${i * 7919}`);
  hashes.push([parseInt(hex.slice(0, 8), 16), parseInt(hex.slice(8), 16)]);
}

const plain = compile(config(null));
const base = time('handleRequest, no lanes', (i) => handleRequest(plain, evs[i % evs.length]));
let worst = 0;
for (const mr of [[8, 2], [64, 2], [64, 4], [256, 8]]) {
  const rt = compile(config(mr));
  const ns = time(`handleRequest, lanes M=${mr[0]} r=${mr[1]}`, (i) => handleRequest(rt, evs[i % evs.length]));
  const l = layout(mr[0], mr[1]);
  time(`  lanesValue alone, M=${mr[0]} r=${mr[1]}`, (i) => lanesValue(l, hashes[i & 1023][0], hashes[i & 1023][1]));
  worst = Math.max(worst, ns - base);
}
scanTenant('x');
console.log(worst <= 1000 ? `ok: lanes add at most ${worst.toFixed(0)} ns (goal 1000 ns)` : `SLOW: lanes add ${worst.toFixed(0)} ns (goal 1000 ns)`);
