'use strict';
// The edge's lanes against the vectors Go writes (go test ./router
// ./router/edge -update): mix64, rank and lanes for every layout, and the
// X-Cell-Lanes header of forwarded requests.
const test = require('node:test');
const assert = require('node:assert/strict');
const { layout, compileLanes, unrank, rankOf, lanesValue, mix64Hex, mod64, modStep, MAX_SHARDS } = require('./lanes');
const { createHandler, fnv1a64Hex, scanTenant } = require('./routing');
const { readGolden, goldenPackage, event } = require('./testkit');

const vectors = readGolden('golden_lanes.json');
const mixes = readGolden('golden_mix64.json');

function halves(hex) {
  return [parseInt(hex.slice(0, 8), 16), parseInt(hex.slice(8), 16)];
}

test('golden lane vectors cover the edges the Go side promises', () => {
  const layouts = new Set(vectors.map((v) => `${v.m},${v.r}`));
  for (const l of ['1,1', '8,2', '64,2', '256,1', '256,8', '256,256', '2,2']) assert.ok(layouts.has(l), `no vectors for M,r = ${l}`);
  assert.ok(vectors.some((v) => v.m === v.r && v.m > 1), 'no r = M vectors');
  assert.ok(vectors.some((v) => /[^\x00-\x7f]/.test(v.tenant)), 'no unicode tenant ids');
  assert.ok(vectors.some((v) => Buffer.byteLength(v.tenant) === 128), 'no 128-byte tenant id');
  assert.ok(vectors.some((v) => Buffer.byteLength(v.tenant) === 1), 'no 1-byte tenant id');
  assert.ok(vectors.some((v) => v.shards > 2 ** 52), 'no shard count near the 2^53-1 cap');
  assert.ok(vectors.some((v) => v.shards > 0x200000 && v.shards < 2 ** 40), 'no shard count past the fast path');
  assert.ok(vectors.length >= 2000, `only ${vectors.length} vectors`);
});

test('mix64 (splitmix64 finalizer) on every golden word', () => {
  for (const v of mixes) assert.equal(mix64Hex(v.in), v.out, `mix64(${v.in})`);
});

test('every lane vector: FNV hash, lane hash, shard count, rank, lanes', () => {
  const layouts = new Map();
  for (const v of vectors) {
    const key = `${v.m},${v.r}`;
    if (!layouts.has(key)) layouts.set(key, layout(v.m, v.r));
    const l = layouts.get(key);
    const label = `${JSON.stringify(v.tenant)} M=${v.m} r=${v.r}`;
    assert.equal(l.shards, v.shards, `C(M, r), ${label}`);
    assert.equal(fnv1a64Hex(v.tenant), v.hash, `hash, ${label}`);
    assert.equal(mix64Hex(v.hash), v.lane_hash, `lane hash, ${label}`);
    const [hi, lo] = halves(v.hash);
    assert.equal(rankOf(l, hi, lo), v.rank, `rank, ${label}`);
    assert.equal(lanesValue(l, hi, lo), v.lanes, `lanes, ${label}`);
  }
});

test('mod64 is exact up to the 2^53-1 cap', () => {
  // Reference with BigInt (tests only; the handler never uses BigInt).
  const ns = [1, 2, 3, 28, 2016, 0xffff, 0x10000, 0x200000, 0x200001, 2 ** 32 - 1, 2 ** 32, 2 ** 32 + 1, 2 ** 37 - 1, 2 ** 37, 2 ** 45 + 7, 2 ** 51 + 3, 2 ** 52 - 1, 2 ** 52 + 1, MAX_SHARDS - 1, MAX_SHARDS];
  const words = [[0, 0], [0, 1], [0xffffffff, 0xffffffff], [0x80000000, 0], [0x7fffffff, 0xffffffff], [0x12345678, 0x9abcdef0], [1, 0]];
  for (const n of ns) {
    for (const [hi, lo] of words) {
      const want = Number(((BigInt(hi) << 32n) + BigInt(lo)) % BigInt(n));
      assert.equal(mod64(hi, lo, n, modStep(n)), want, `(${hi}:${lo}) mod ${n} (step ${modStep(n)})`);
    }
  }
});

test('unrank covers every shard exactly once for small layouts', () => {
  for (const [m, r] of [[1, 1], [5, 2], [8, 2], [9, 4], [7, 7]]) {
    const l = layout(m, r);
    const seen = new Set();
    for (let n = 0; n < l.shards; n++) {
      const s = Array.from(unrank(l, n));
      for (let i = 0; i < s.length; i++) assert.ok(s[i] >= 0 && s[i] < m && (i === 0 || s[i] > s[i - 1]), `M=${m} r=${r} rank ${n}: ${s}`);
      seen.add(s.join(','));
    }
    assert.equal(seen.size, l.shards);
  }
});

test('bad lane layouts fail the config, not a request', () => {
  const fail = (m) => {
    throw new Error(m);
  };
  const index = new Map([['cell-a', 0]]);
  for (const bad of [{ 'cell-a': [0, 1] }, { 'cell-a': [257, 1] }, { 'cell-a': [8, 9] }, { 'cell-a': [8, 0] }, { 'cell-a': [256, 128] }, { 'cell-a': [8] }, { 'cell-b': [8, 2] }, [], null]) {
    assert.throws(() => compileLanes(bad, index, 1, fail), undefined, JSON.stringify(bad));
  }
  assert.deepEqual(compileLanes(undefined, index, 1, fail), [null]);
});

const configs = { lanes: goldenPackage('lanes').cfg };
const image = () => goldenPackage('lanes').image;
const requests = readGolden('golden_requests_lanes.json');

test('every lanes request vector: X-Cell-Lanes as Go sends it', async () => {
  const handler = createHandler(configs.lanes, image());
  let withLanes = 0;
  for (const v of requests) {
    const { method, headers } = v.request;
    const want = v.expect;
    const label = `${v.name}: ${method} ${JSON.stringify(headers)}`;
    const ev = event(method, headers);
    const res = await handler(ev);
    if (want.kind !== 'forward') {
      assert.notEqual(res, ev.Records[0].cf.request, label);
      continue;
    }
    assert.deepEqual(res.headers['x-cell-id'], [{ key: 'X-Cell-Id', value: want.cell }], label);
    if (want.lanes) {
      assert.deepEqual(res.headers['x-cell-lanes'], [{ key: 'X-Cell-Lanes', value: want.lanes }], label);
      withLanes++;
    } else {
      assert.equal(res.headers['x-cell-lanes'], undefined, label);
    }
  }
  assert.ok(withLanes >= 100, `only ${withLanes} requests with lanes`);
  // route() reports the same lanes as the header.
  assert.ok(scanTenant('acme'));
});

test('a viewer cannot choose its lanes', async () => {
  const handler = createHandler(configs.lanes, image());
  const ev = event('GET', [['X-Tenant-Id', 'acme'], ['X-Cell-Lanes', '0,1,2,3']]);
  const res = await handler(ev);
  const want = requests.find((v) => v.name === 'viewer X-Cell-Lanes is replaced' && v.expect.tenant === 'acme');
  assert.ok(want, 'vector missing');
  assert.deepEqual(res.headers['x-cell-lanes'], [{ key: 'X-Cell-Lanes', value: want.expect.lanes }]);
  // Without lanes in the config, a viewer's header is dropped.
  const plain = Object.assign({}, configs.lanes);
  delete plain.lanes;
  const ev2 = event('GET', [['X-Tenant-Id', 'acme'], ['X-Cell-Lanes', '0,1']]);
  const res2 = await createHandler(plain, image())(ev2);
  assert.equal(res2.headers['x-cell-lanes'], undefined);
});
