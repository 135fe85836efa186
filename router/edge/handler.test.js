'use strict';
// Handler behaviour the Go vectors cannot express: the packaged entry
// point (and a package it refuses), JS string edge cases, the Lambda@Edge
// response shape and what the rewrite keeps.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { createHandler, scanTenant, fnv1a64Hex, tenantFromHost, route } = require('./routing');
const { goldenPackage, goldenHandler, GOLDEN_DIR, event, ORIGIN_SECRET } = require('./testkit');

const { cfg: config } = goldenPackage('full');
const handlerOf = (cfg) => createHandler(cfg, goldenPackage('full').image);

// withPackage lays a function package out as Lambda does (the code next to
// config.json and the image) and loads index.js from it in this process.
async function withPackage(change, fn) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cell-router-'));
  try {
    for (const f of ['index.js', 'routing.js', 'lanes.js', 'image.js']) fs.copyFileSync(path.join(__dirname, f), path.join(dir, f));
    for (const f of ['config.json', 'routing.img']) fs.copyFileSync(path.join(GOLDEN_DIR, 'edge', 'full', f), path.join(dir, f));
    change(dir);
    await fn(require(path.join(dir, 'index.js')).handler);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

test('index.js serves the package baked next to it', async () => {
  await withPackage(() => {}, async (handler) => {
    assert.equal(handler.loadError, undefined);
    const res = await handler(event('GET', [['X-Tenant-Id', 'acme']]));
    assert.equal(res.origin.custom.domainName, config.origins['cell-b']);
    assert.deepEqual(res.headers['x-cell-id'], [{ key: 'X-Cell-Id', value: 'cell-b' }]);
  });
});

// The function runs on nodejs24.x (edge.Runtime), which calls only async
// handlers: Lambda's Node.js 24 runtime has no callback-based handlers.
// These tests run on whatever node the machine has (Node 20 here, see
// docs/TESTING.md), so the shape is asserted rather than left to the runtime.
test('the packaged handler, and the one answering 503, are async and take no callback', async () => {
  await withPackage(() => {}, async (handler) => {
    assert.equal(handler.constructor.name, 'AsyncFunction');
    assert.ok(handler.length < 3, `handler takes ${handler.length} parameters`);
  });
  await withPackage((dir) => fs.rmSync(path.join(dir, 'routing.img')), async (handler) => {
    assert.ok(handler.loadError);
    assert.equal(handler.constructor.name, 'AsyncFunction');
    assert.ok(handler.length < 3);
  });
});

test('a corrupt, truncated, missing or mismatched image: every request is a 503 that says so, none is routed', async () => {
  const img = (dir) => path.join(dir, 'routing.img');
  const cases = [
    ['a flipped byte', (dir) => { const b = fs.readFileSync(img(dir)); b[b.length - 40] ^= 1; fs.writeFileSync(img(dir), b); }, /checksum mismatch/],
    ['truncated', (dir) => { const b = fs.readFileSync(img(dir)); fs.writeFileSync(img(dir), b.subarray(0, b.length - 100)); }, /truncated or corrupt/],
    ['missing', (dir) => fs.rmSync(img(dir)), /routing.img: ENOENT/],
    ['another table', (dir) => fs.copyFileSync(path.join(GOLDEN_DIR, 'edge', 'partial', 'routing.img'), img(dir)), /is not the image this config names/],
    ['config.json is not JSON', (dir) => fs.writeFileSync(path.join(dir, 'config.json'), '{"format": 2,'), /config.json/],
  ];
  for (const [name, change, why] of cases) {
    const logged = [];
    const orig = console.error;
    console.error = (...args) => logged.push(args.join(' '));
    try {
      await withPackage(change, async (handler) => {
        assert.match(handler.loadError.message, why, name);
        for (const ev of [event('GET', [['X-Tenant-Id', 'acme']]), event('POST', []), {}]) {
          const res = await handler(ev);
          assert.equal(res.status, '503', name);
          assert.match(res.body, /refused its routing table at start/, name);
          assert.deepEqual(res.headers['cache-control'], [{ key: 'Cache-Control', value: 'no-store' }]);
        }
      });
    } finally {
      console.error = orig;
    }
    assert.ok(logged.some((l) => why.test(l)), `${name}: the reason is logged`);
  }
});

test('FNV-1a 64 reference vectors', () => {
  assert.equal(fnv1a64Hex('a'), 'af63dc4c8601ec8c');
  assert.equal(fnv1a64Hex('foobar'), '85944171f73967e8');
  assert.equal(fnv1a64Hex(''), null); // valid hashes are of valid ids only
});

test('tenant ids: lone surrogates, UTF-8 length, non-strings', () => {
  assert.equal(scanTenant('a\ud800'), false, 'lone high surrogate at the end');
  assert.equal(scanTenant('\ud800a'), false, 'high surrogate without its pair');
  assert.equal(scanTenant('a\udc00b'), false, 'lone low surrogate');
  assert.equal(scanTenant('\ud83d\ude00'), true, 'a proper pair');
  assert.equal(scanTenant('😀'.repeat(32)), true, '128 bytes in 64 UTF-16 units');
  assert.equal(scanTenant('😀'.repeat(32) + 'a'), false, '129 bytes');
  assert.equal(scanTenant('é'.repeat(65)), false, '130 bytes in 65 UTF-16 units');
  assert.equal(scanTenant('x'.repeat(129)), false);
  for (const v of [undefined, null, 42, {}, ['acme']]) assert.equal(scanTenant(v), false, String(v));
});

test('host labels', () => {
  assert.equal(tenantFromHost('Acme.Example.com:443'), 'acme');
  assert.equal(tenantFromHost('ÄCME.example.com'), 'Äcme', 'only ASCII is lowercased, as in Go');
  assert.equal(tenantFromHost('[::1]'), '');
  assert.equal(tenantFromHost(undefined), '');
});

test('forwarded requests keep the origin settings and CloudFront custom headers', async () => {
  const handler = handlerOf(config);
  const ev = event('POST', [['X-Tenant-Id', 'initech'], ['X-Cell-Id', 'cell-a'], ['Content-Type', 'application/json']]);
  const before = structuredClone(ev.Records[0].cf.request);
  const res = await handler(ev);
  assert.equal(res.origin.custom.domainName, config.origins['cell-e']);
  for (const k of ['port', 'protocol', 'path', 'readTimeout', 'keepaliveTimeout', 'sslProtocols', 'customHeaders']) {
    assert.deepEqual(res.origin.custom[k], before.origin.custom[k], k);
  }
  assert.equal(res.origin.custom.customHeaders['x-origin-verify'][0].value, ORIGIN_SECRET);
  // A client cannot pick its cell: X-Cell-Id is overwritten, not appended.
  assert.deepEqual(res.headers['x-cell-id'], [{ key: 'X-Cell-Id', value: 'cell-e' }]);
  assert.deepEqual(res.headers['x-routing-version'], [{ key: 'X-Routing-Version', value: String(config.version) }]);
  assert.deepEqual(res.headers['content-type'], before.headers['content-type']);
  assert.deepEqual(res.headers['x-tenant-id'], before.headers['x-tenant-id']);
  assert.equal(res.uri, before.uri);
  assert.equal(res.querystring, before.querystring);
});

test('the origin secret is never in the code or the baked config', () => {
  for (const f of ['index.js', 'routing.js', 'image.js']) {
    assert.doesNotMatch(fs.readFileSync(path.join(__dirname, f), 'utf8'), new RegExp(ORIGIN_SECRET));
  }
  assert.doesNotMatch(JSON.stringify(config), /origin-verify/i);
});

test('generated responses have the Lambda@Edge shape and are not cached', async () => {
  const handler = handlerOf(config);
  const cases = [
    [event('GET', []), '400'],
    [event('PUT', [['X-Tenant-Id', 'globex']]), '503'],
  ];
  for (const [ev, status] of cases) {
    const res = await handler(ev);
    assert.equal(res.status, status);
    assert.equal(typeof res.statusDescription, 'string');
    assert.equal(typeof res.body, 'string');
    for (const [k, list] of Object.entries(res.headers)) {
      assert.equal(k, k.toLowerCase());
      assert.ok(Array.isArray(list) && list.every((h) => h.key.toLowerCase() === k && typeof h.value === 'string'));
    }
    assert.deepEqual(res.headers['cache-control'], [{ key: 'Cache-Control', value: 'no-store' }]);
  }
});

test('a non-custom origin is refused, not forwarded', async () => {
  const handler = handlerOf(config);
  const ev = event('GET', [['X-Tenant-Id', 'acme']]);
  ev.Records[0].cf.request.origin = { s3: { domainName: 'bucket.s3.amazonaws.com', path: '' } };
  const res = await handler(ev);
  assert.equal(res.status, '502');
});

test('prototype keys are neither overrides nor headers', async () => {
  const handler = goldenHandler('full');
  const rt = handler.routingTable;
  assert.equal(route(rt, 'constructor').override, false);
  assert.equal(route(rt, '__proto__').override, true, 'the golden table pins "__proto__"');
  const res = await handler(event('GET', [['X-Tenant-Id', '__proto__']]));
  assert.deepEqual(res.headers['x-cell-id'], [{ key: 'X-Cell-Id', value: 'cell-d' }]);
  const h = handlerOf({ ...config, tenantHeader: 'constructor' });
  const r2 = await h(event('GET', [['Host', 'acme.example.com']]));
  assert.deepEqual(r2.headers['x-cell-id'], [{ key: 'X-Cell-Id', value: 'cell-b' }]);
});
