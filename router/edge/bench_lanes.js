'use strict';
// What lanes add to a request at the edge: the demo fleet's table, packaged
// by `cellctl router package` with every cell's lanes set to each layout
// (and once with lanes left out), and the lane computation alone (mix64,
// rank, unrank, header string) per tenant. Goal: lanes add ≤ 1 µs to a
// route.
//
//   node router/edge/bench_lanes.js [iterations per round] [rounds]
const { compile, handleRequest, readPackage, scanTenant, fnv1a64Hex } = require('./routing');
const { layout, lanesValue } = require('./lanes');
const { buildPackage, cleanup } = require('./packagekit');
const { event } = require('./testkit');

const N = Number(process.argv[2]) || 200_000;
const ROUNDS = Number(process.argv[3]) || 8;

// table compiles the package whose cells have lanes [M, r] (null: the
// package's lanes left out of its config).
function table(mr) {
  const pkg = buildPackage(0, mr ? { lanes: { lanes: mr[0], shard: mr[1] } } : {});
  try {
    const { cfg, image } = readPackage(pkg.dir);
    if (!mr) delete cfg.lanes;
    return compile(cfg, image);
  } finally {
    cleanup(pkg);
  }
}

// Interleaved rounds, best of each: on a shared machine a single long run
// mostly measures the neighbours; the configs alternate so they see the
// same load.
function runs(fns, rounds) {
  const best = fns.map(() => Infinity);
  for (const [, fn] of fns) for (let i = 0; i < 200_000; i++) fn(i); // warm up the JIT
  for (let r = 0; r < rounds; r++) {
    fns.forEach(([, fn], k) => {
      const start = process.hrtime.bigint();
      for (let i = 0; i < N; i++) fn(i);
      best[k] = Math.min(best[k], Number(process.hrtime.bigint() - start) / N);
    });
  }
  return best;
}

const evs = [];
for (let i = 0; i < 10_000; i++) evs.push(event('GET', [['X-Tenant-Id', `tenant-${(i * 7919) % 100000}`]]));
const hashes = [];
for (let i = 0; i < 1024; i++) {
  const hex = fnv1a64Hex(`tenant-${i * 7919}`);
  hashes.push([parseInt(hex.slice(0, 8), 16), parseInt(hex.slice(8), 16)]);
}

const plain = table(null);
let worst = 0;
for (const mr of [[8, 2], [64, 2], [64, 4], [256, 8]]) {
  const rt = table(mr);
  const l = layout(mr[0], mr[1]);
  const [base, with_, alone] = runs(
    [
      ['no lanes', (i) => handleRequest(plain, evs[i % evs.length])],
      ['lanes', (i) => handleRequest(rt, evs[i % evs.length])],
      ['lanesValue', (i) => lanesValue(l, hashes[i & 1023][0], hashes[i & 1023][1])],
    ],
    ROUNDS,
  );
  const label = `M=${mr[0]} r=${mr[1]}`.padEnd(12);
  console.log(`${label} handleRequest ${base.toFixed(0).padStart(6)} ns without lanes, ${with_.toFixed(0).padStart(6)} ns with (+${(with_ - base).toFixed(0)}); lanesValue alone ${alone.toFixed(0)} ns`);
  if (mr[1] === 2) worst = Math.max(worst, with_ - base);
}
scanTenant('x');
console.log(worst <= 1000 ? `ok: lanes add at most ${worst.toFixed(0)} ns for r = 2 (goal 1000 ns)` : `SLOW: lanes add ${worst.toFixed(0)} ns for r = 2 (goal 1000 ns)`);
