'use strict';
// The tenant from a JWT claim: the edge reads every token of the corpus Go
// writes (golden_jwt.json: good tokens and thousands of malformed ones)
// exactly as TenantFromJWT in jwt.go does.
const test = require('node:test');
const assert = require('node:assert/strict');
const { tenantFromJWT, scanTenant } = require('./routing');
const { readGolden, goldenHandler, event } = require('./testkit');

const corpus = readGolden('golden_jwt.json');

test('the JWT corpus agrees with Go on every token', () => {
  assert.ok(corpus.length >= 1000, `only ${corpus.length} tokens`);
  let read = 0;
  for (const v of corpus) {
    let got = tenantFromJWT(v.authorization, 'tid');
    if (!scanTenant(got)) got = '';
    assert.equal(got, v.tenant, `Authorization: ${JSON.stringify(v.authorization).slice(0, 200)}`);
    if (got !== '') read++;
  }
  assert.ok(read >= 100, `only ${read} tokens name a tenant`);
});

test('a malformed or missing token is a 400, like a missing header', async () => {
  const handler = goldenHandler('jwt');
  for (const auth of ['Basic dXNlcjpwYXNz', 'Bearer not-a-jwt', 'Bearer a.b.c', '']) {
    const res = await handler(event('GET', [['Authorization', auth], ['X-Tenant-Id', 'acme']]));
    assert.equal(res.status, '400', auth);
    assert.match(res.body, /bearer JWT in the Authorization header whose "tid" claim/);
  }
  const res = await handler(event('GET', [['X-Tenant-Id', 'acme']]));
  assert.equal(res.status, '400', 'the tenant header is not a source when the tenant comes from a JWT');
});

test('the token is forwarded untouched: the cell authenticates it', async () => {
  const handler = goldenHandler('jwt');
  const token = corpus.find((v) => v.tenant === 'acme').authorization;
  const ev = event('GET', [['Authorization', token]]);
  const res = await handler(ev);
  assert.deepEqual(res.headers['x-cell-id'], [{ key: 'X-Cell-Id', value: 'cell-b' }]);
  assert.deepEqual(res.headers.authorization, [{ key: 'Authorization', value: token }]);
});
