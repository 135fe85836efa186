'use strict';
// Handler time per request over a realistic package: the demo fleet's
// table (B=1024, 4 cells) with 1000 overrides (a tenth migrating), built
// by `cellctl router package` as the router stack ships it, and a request
// mix of 85% hashed tenants by header, 10% overridden tenants (including
// rejected writes) and 5% tenants by Host. Lanes are left out (their cost
// is bench_lanes.js's). Goals: routing core ≤ 400 ns, handler ≤ 5 µs.
//
//   node router/edge/bench.js [iterations] [overrides]
const { compile, createHandler, handleRequest, readPackage } = require('./routing');
const { buildPackage, cleanup } = require('./packagekit');
const { event } = require('./testkit');

const N = Number(process.argv[2]) || 1_000_000;
const OVERRIDES = process.argv[3] === undefined ? 1000 : Number(process.argv[3]);

function events(count) {
  const out = [];
  for (let i = 0; i < count; i++) {
    const r = i % 20;
    if (r < 17) out.push(event('GET', [['X-Tenant-Id', `tenant-${(i * 7919) % 100000}`], ['Accept', 'application/json']]));
    else if (r === 17) out.push(event('GET', [['X-Tenant-Id', `pinned-${i % OVERRIDES}`]]));
    else if (r === 18) out.push(event('POST', [['X-Tenant-Id', `pinned-${((i % 100) * 10) % Math.max(OVERRIDES, 1)}`]])); // migrating: 503
    else out.push(event('GET', [['Host', `tenant-${i % 5000}.app.example.com`]]));
  }
  return out;
}

function measure(label, evs, fn) {
  for (let i = 0; i < 200_000; i++) fn(evs[i % evs.length]); // warm up the JIT
  const start = process.hrtime.bigint();
  for (let i = 0; i < N; i++) fn(evs[i % evs.length]);
  const ns = Number(process.hrtime.bigint() - start) / N;
  console.log(`${label.padEnd(44)} ${ns.toFixed(0).padStart(6)} ns/op`);
  return ns;
}

async function measureAsync(label, evs, handler) {
  for (let i = 0; i < 200_000; i++) await handler(evs[i % evs.length]);
  const start = process.hrtime.bigint();
  for (let i = 0; i < N; i++) await handler(evs[i % evs.length]);
  const ns = Number(process.hrtime.bigint() - start) / N;
  console.log(`${label.padEnd(44)} ${ns.toFixed(0).padStart(6)} ns/op`);
  return ns;
}

async function main() {
  const pkg = buildPackage(OVERRIDES, { tenant: (i) => `pinned-${i}` });
  try {
    const { cfg, image } = readPackage(pkg.dir);
    delete cfg.lanes;
    const t0 = process.hrtime.bigint();
    const rt = compile(cfg, image);
    console.log(`${'compile package (cold start)'.padEnd(44)} ${(Number(process.hrtime.bigint() - t0) / 1e3).toFixed(0).padStart(6)} µs`);
    const evs = events(10_000);
    const sync = measure(`handleRequest (B=1024, ${OVERRIDES} overrides)`, evs, (ev) => handleRequest(rt, ev));
    const handler = createHandler(cfg, readPackage(pkg.dir).image);
    const full = await measureAsync('exports.handler incl. async/await', evs, handler);
    console.log(sync <= 400 && full <= 5000 ? 'ok: routing core within 400 ns, handler within 5 µs' : 'SLOW: goals are 400 ns (core) and 5 µs (handler)');
  } finally {
    cleanup(pkg);
  }
}

main();
