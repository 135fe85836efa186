'use strict';
// Handler time per request over a realistic table: B=1024 buckets, 8 cells
// with fragmented ranges, 1000 overrides (a tenth migrating), and a request
// mix of 85% hashed tenants by header, 10% overridden tenants (including
// rejected writes) and 5% tenants by Host. Goal: ≤ 5 µs per request.
//
//   node router/edge/bench.js [iterations]
const { compile, createHandler, handleRequest } = require('./routing');
const { event } = require('./testkit');

const N = Number(process.argv[2]) || 1_000_000;

function config() {
  const cells = Array.from({ length: 8 }, (_, i) => `cell-${String.fromCharCode(97 + i)}`);
  const bucketRuns = [];
  for (let b = 0; b < 1024; b += 32) bucketRuns.push(32, (b / 32) % 8); // 32 runs
  const overrides = {};
  for (let i = 0; i < 1000; i++) {
    overrides[`pinned-${i}`] = i % 10 === 0 ? { cell: cells[i % 8], rejectWrites: true } : { cell: cells[i % 8] };
  }
  const origins = {};
  for (const c of cells) origins[c] = `${c}.cells.example.com`;
  return {
    format: 1, version: 7, buckets: 1024, tenantHeader: 'x-tenant-id', retryAfterSeconds: 30,
    tenantHostDomains: ['app.example.com'], cells, origins, bucketRuns, overrides,
  };
}

function events(count) {
  const out = [];
  for (let i = 0; i < count; i++) {
    const r = i % 20;
    if (r < 17) out.push(event('GET', [['X-Tenant-Id', `tenant-${(i * 7919) % 100000}`], ['Accept', 'application/json']]));
    else if (r === 17) out.push(event('GET', [['X-Tenant-Id', `pinned-${i % 1000}`]]));
    else if (r === 18) out.push(event('POST', [['X-Tenant-Id', `pinned-${(i % 100) * 10}`]])); // migrating: 503
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
  const cfg = config();
  const t0 = process.hrtime.bigint();
  const rt = compile(cfg);
  console.log(`${'compile config (cold start)'.padEnd(44)} ${(Number(process.hrtime.bigint() - t0) / 1e3).toFixed(0).padStart(6)} µs`);
  const evs = events(10_000);
  const sync = measure('handleRequest (B=1024, 1000 overrides)', evs, (ev) => handleRequest(rt, ev));
  const handler = createHandler(cfg);
  const full = await measureAsync('exports.handler incl. async/await', evs, handler);
  const goal = 5000;
  console.log(full <= goal && sync <= goal ? `ok: within the ${goal} ns goal` : `SLOW: goal is ${goal} ns/op`);
}

main();
