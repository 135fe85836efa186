'use strict';
// Handler behaviour the Go vectors cannot express: the packaged entry
// point, JS string edge cases, the Lambda@Edge response shape, what the
// rewrite keeps, and refusing malformed configs.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { compile, createHandler, scanTenant, fnv1a64Hex, tenantFromHost } = require('./routing');
const { readGolden, event, ORIGIN_SECRET } = require('./testkit');

const config = readGolden('golden_config.json');

test('index.js serves the config.json baked next to it', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cell-router-'));
  try {
    for (const f of ['index.js', 'routing.js', 'lanes.js']) fs.copyFileSync(path.join(__dirname, f), path.join(dir, f));
    fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify(config));
    const { handler } = require(path.join(dir, 'index.js'));
    const res = await handler(event('GET', [['X-Tenant-Id', 'acme']]));
    assert.equal(res.origin.custom.domainName, config.origins['cell-b']);
    assert.deepEqual(res.headers['x-cell-id'], [{ key: 'X-Cell-Id', value: 'cell-b' }]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
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
  const handler = createHandler(config);
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
  for (const f of ['index.js', 'routing.js']) {
    assert.doesNotMatch(fs.readFileSync(path.join(__dirname, f), 'utf8'), new RegExp(ORIGIN_SECRET));
  }
  assert.doesNotMatch(JSON.stringify(config), /origin-verify/i);
});

test('generated responses have the Lambda@Edge shape and are not cached', async () => {
  const handler = createHandler(config);
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
  const handler = createHandler(config);
  const ev = event('GET', [['X-Tenant-Id', 'acme']]);
  ev.Records[0].cf.request.origin = { s3: { domainName: 'bucket.s3.amazonaws.com', path: '' } };
  const res = await handler(ev);
  assert.equal(res.status, '502');
});

test('prototype keys are neither overrides nor headers', async () => {
  const handler = createHandler(config);
  const rt = handler.routingTable;
  assert.equal(rt.overrides.has('constructor'), false);
  assert.equal(rt.overrides.has('__proto__'), true, 'the golden table pins "__proto__"');
  const res = await handler(event('GET', [['X-Tenant-Id', '__proto__']]));
  assert.deepEqual(res.headers['x-cell-id'], [{ key: 'X-Cell-Id', value: 'cell-d' }]);
  const h = createHandler({ ...config, tenantHeader: 'constructor' });
  const r2 = await h(event('GET', [['Host', 'acme.example.com']]));
  assert.deepEqual(r2.headers['x-cell-id'], [{ key: 'X-Cell-Id', value: 'cell-b' }]);
});

test('malformed configs fail at cold start', () => {
  const bad = [
    [{ ...config, format: 2 }, /format/],
    [{ ...config, buckets: 0 }, /buckets/],
    [{ ...config, version: 0 }, /version/],
    [{ ...config, bucketRuns: [1000, 0] }, /cover 1000 buckets/],
    [{ ...config, bucketRuns: [1024, 9] }, /not a cell index/],
    [{ ...config, origins: { 'cell-x': 'x.example.com' } }, /unknown cell/],
    [{ ...config, overrides: { acme: { cell: 'cell-x' } } }, /unknown cell/],
    [{ ...config, cells: ['cell-a', 'cell-a'] }, /unique/],
    [null, /not an object/],
  ];
  for (const [cfg, msg] of bad) assert.throws(() => compile(cfg), msg);
});
