'use strict';
// The edge handler against every golden vector the Go side writes
// (go test ./router ./router/edge -update): same validity, hash, second
// hash, bucket and cell for every tenant id, read from the golden routing
// images Go wrote and reads itself, and the same response for every
// request.
const test = require('node:test');
const assert = require('node:assert/strict');
const { route, fnv1a64Hex, tenantFromHostIn } = require('./routing');
const { hash2Hex } = require('./image');
const { readGolden, goldenHandler, goldenTable, event, ORIGIN_SECRET } = require('./testkit');

const PACKAGES = ['full', 'partial', 'nohost', 'jwt'];
const tenants = readGolden('golden_tenants.json');
const requests = readGolden('golden_requests.json');

test('golden files have the coverage the Go side promises', () => {
  assert.ok(tenants.length >= 2500, `only ${tenants.length} tenant vectors`);
  assert.ok(tenants.some((v) => !v.valid) && tenants.some((v) => v.override));
  assert.ok(tenants.some((v) => /[^\x00-\x7f]/.test(v.tenant) && v.valid), 'no valid unicode tenant ids');
  assert.ok(tenants.some((v) => Buffer.byteLength(v.tenant) === 128 && v.valid), 'no 128-byte tenant id');
  assert.ok(tenants.some((v) => Buffer.byteLength(v.tenant) === 1 && v.valid), 'no 1-byte tenant id');
  const kinds = new Set(requests.map((r) => r.expect.kind));
  assert.deepEqual([...kinds].sort(), ['bad_request', 'forward', 'no_origin', 'write_rejected']);
  assert.deepEqual([...new Set(requests.map((r) => r.config))].sort(), PACKAGES.slice().sort());
  assert.ok(requests.some((r) => r.expect.source === 'jwt' && r.expect.kind === 'forward'), 'no request routed by a JWT claim');
});

test('every tenant vector, in every golden image: validity, both hashes, bucket, cell, override', () => {
  for (const name of ['full', 'nohost', 'jwt', 'partial', 'lanes']) {
    const rt = goldenTable(name);
    let checked = 0;
    for (const v of tenants) {
      const label = `${name}: ${JSON.stringify(v.tenant)}`;
      const hash = fnv1a64Hex(v.tenant);
      const r = route(rt, v.tenant);
      if (!v.valid) {
        assert.equal(hash, null, `${label} must be invalid`);
        assert.equal(r.valid, false, label);
        assert.equal(r.bucket, -1, label);
        checked++;
        continue;
      }
      assert.equal(hash, v.hash, `hash of ${label}`);
      assert.equal(hash2Hex(v.tenant), v.hash2, `second hash of ${label}`);
      assert.equal(r.valid, true, label);
      assert.equal(r.bucket, v.bucket, `bucket of ${label}`);
      assert.equal(r.cell, v.cell, `cell of ${label}`);
      assert.equal(r.override, v.override === true, `override of ${label}`);
      assert.equal(r.rejectWrites, v.state === 'migrating' && v.write_mode === 'reject_with_503', `write mode of ${label}`);
      checked++;
    }
    assert.equal(checked, tenants.length);
  }
});

test('every request vector: same response kind, cell and origin as Go', async () => {
  const handlers = {};
  for (const name of PACKAGES) handlers[name] = goldenHandler(name);
  let checked = 0;
  for (const v of requests) {
    const { method, headers } = v.request;
    const want = v.expect;
    const label = `${v.name}: ${method} ${JSON.stringify(headers).slice(0, 300)}`;
    const rt = handlers[v.config].routingTable;

    // The tenant the handler reads, and where it routes, match Go's.
    if (want.source === 'host') {
      const host = headers.find(([n]) => n.toLowerCase() === 'host')[1];
      assert.equal(tenantFromHostIn(host, rt.hostDomains), want.tenant, `tenant from host, ${label}`);
    }
    const r = route(rt, want.tenant);
    assert.equal(r.bucket, want.bucket, `bucket, ${label}`);
    if (want.cell) assert.equal(r.cell, want.cell, `cell, ${label}`);

    const ev = event(method, headers);
    const res = await handlers[v.config](ev);
    switch (want.kind) {
      case 'forward': {
        const req = ev.Records[0].cf.request;
        assert.equal(res, req, `must forward the request, ${label}`);
        assert.equal(res.origin.custom.domainName, want.origin, `origin, ${label}`);
        assert.deepEqual(res.headers.host, [{ key: 'Host', value: want.origin }], `host header, ${label}`);
        assert.deepEqual(res.headers['x-cell-id'], [{ key: 'X-Cell-Id', value: want.cell }], `X-Cell-Id, ${label}`);
        assert.deepEqual(res.origin.custom.customHeaders, {
          'x-origin-verify': [{ key: 'X-Origin-Verify', value: ORIGIN_SECRET }],
        });
        break;
      }
      case 'bad_request':
        assert.equal(res.status, '400', label);
        break;
      case 'write_rejected':
        assert.equal(res.status, '503', label);
        assert.deepEqual(res.headers['retry-after'], [{ key: 'Retry-After', value: String(want.retryAfter) }], label);
        break;
      case 'no_origin':
        assert.equal(res.status, '502', label);
        assert.match(res.body, new RegExp(want.cell), label);
        break;
      default:
        assert.fail(`unknown kind ${want.kind}`);
    }
    if (want.status) assert.equal(res.status, String(want.status), label);
    checked++;
  }
  assert.equal(checked, requests.length);
  assert.ok(checked >= 3000, `only ${checked} request vectors`);
});
