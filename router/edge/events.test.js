'use strict';
// The handler answers every event, never throws: the CloudFront sample
// events AWS publishes (aws-lambda-go, AWS SAM; see testdata/edge-events)
// as they are and mutated at every field, and the malformed events that
// used to throw a TypeError (a 5xx from CloudFront with no word of why).
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { readGolden, goldenHandler, goldenPackage, event } = require('./testkit');

const EVENTS_DIR = path.join(__dirname, '..', '..', 'testdata', 'edge-events');
const config = goldenPackage('full').cfg;
const handler = goldenHandler('full');
// The tenant from the "tid" claim of a bearer JWT (cells:tenantFrom: jwt:tid).
const jwtHandler = goldenHandler('jwt');
const jwtCorpus = readGolden('golden_jwt.json');
const origins = new Set(Object.values(config.origins));

// samples returns [name, event] for every published sample; SAM's templates
// get the defaults `sam local generate-event cloudfront <kind>` fills in.
function samples() {
  const out = [];
  const lambdaGo = path.join(EVENTS_DIR, 'aws-lambda-go');
  for (const f of fs.readdirSync(lambdaGo).sort()) {
    out.push([`aws-lambda-go/${f}`, JSON.parse(fs.readFileSync(path.join(lambdaGo, f), 'utf8'))]);
  }
  const sam = path.join(EVENTS_DIR, 'aws-sam-cli');
  const mapping = JSON.parse(fs.readFileSync(path.join(sam, 'event-mapping.cloudfront.json'), 'utf8')).cloudfront;
  for (const kind of Object.keys(mapping).sort()) {
    const { filename, tags } = mapping[kind];
    let text = fs.readFileSync(path.join(sam, filename + '.json'), 'utf8');
    for (const [tag, { default: value }] of Object.entries(tags)) text = text.split(`{{{${tag}}}}`).join(value);
    assert.doesNotMatch(text, /\{\{\{/, `${filename}: unfilled placeholder`);
    out.push([`aws-sam-cli/${filename}.json`, JSON.parse(text)]);
  }
  return out;
}

function isObject(v) {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function assertHeaders(h, where) {
  assert.ok(isObject(h), `${where}: headers must be an object`);
  for (const [name, list] of Object.entries(h)) {
    assert.ok(Array.isArray(list) && list.length > 0, `${where}: header ${name} must be a non-empty array`);
    for (const e of list) assert.ok(isObject(e) && typeof e.value === 'string', `${where}: header ${name} entry ${JSON.stringify(e)}`);
  }
}

// assertAnswer checks the handler's result is something CloudFront accepts
// from an origin-request function: a generated response, or the request
// rewritten to one of the table's cells.
function assertAnswer(res, where) {
  assert.ok(isObject(res), `${where}: the result must be an object, got ${typeof res}`);
  if (res.status !== undefined) {
    assert.match(res.status, /^(400|502|503)$/, `${where}: status`);
    assert.equal(typeof res.statusDescription, 'string', `${where}: statusDescription`);
    assert.equal(typeof res.body, 'string', `${where}: body`);
    assertHeaders(res.headers, where);
    return res.status;
  }
  assertHeaders(res.headers, where);
  assert.ok(origins.has(res.origin.custom.domainName), `${where}: forwarded to ${res.origin.custom.domainName}`);
  assert.equal(res.headers.host[0].value, res.origin.custom.domainName, `${where}: Host`);
  assert.ok(res.headers['x-cell-id'], `${where}: X-Cell-Id`);
  for (const k of ['method', 'uri', 'querystring', 'clientIp']) {
    assert.ok(res[k] === undefined || typeof res[k] === 'string', `${where}: ${k} is ${typeof res[k]}`);
  }
  return 'forward';
}

async function answer(ev, where, h = handler) {
  let res;
  try {
    res = await h(ev);
  } catch (err) {
    assert.fail(`${where}: the handler threw ${err && err.stack}`);
  }
  return assertAnswer(res, where);
}

test('published CloudFront sample events get an answer', async () => {
  const got = {};
  for (const [name, ev] of samples()) got[name] = await answer(structuredClone(ev), name);
  // The request samples carry no tenant header and a Host of d123.cf.net /
  // d111111abcdef8…, which is under none of the distribution's wildcard
  // viewer domains: the edge never reads a tenant from such a Host, so
  // the answer is a well-formed 400 (issue 8: no Host fallback without
  // viewer domains), not a guess.
  assert.equal(got['aws-lambda-go/cloudfront-request.json'], '400');
  assert.equal(got['aws-lambda-go/cloudfront-response.json'], '502', '"records" in lower case is not an origin-request event');
  // No tenant header either: refused (400) before its missing origin matters.
  assert.equal(got['aws-sam-cli/CloudFrontABTest.json'], '400', 'no tenant, no origin');
  assert.equal(got['aws-sam-cli/CloudFrontModifyResponseHeader.json'], '502', 'a response event has no request');
  assert.equal(Object.keys(got).length, 14);
});

// Every JSON path of a value, as arrays of keys.
function paths(v, prefix = [], out = []) {
  if (v !== null && typeof v === 'object') {
    for (const k of Object.keys(v)) {
      const p = prefix.concat(Array.isArray(v) ? Number(k) : k);
      out.push(p);
      paths(v[k], p, out);
    }
  }
  return out;
}

const REPLACEMENTS = [undefined, null, '', 'x', 0, 1.5, true, [], [null], {}, { value: 7 }];

function mutate(ev, p, replacement) {
  const copy = structuredClone(ev);
  let parent = copy;
  for (const k of p.slice(0, -1)) parent = parent[k];
  const last = p[p.length - 1];
  if (replacement === undefined) {
    if (Array.isArray(parent)) parent.splice(last, 1);
    else delete parent[last];
  } else {
    parent[last] = structuredClone(replacement);
  }
  return copy;
}

test('every field of every sample removed, nulled or retyped still gets an answer', async () => {
  const all = samples();
  all.push(['testkit', event('POST', [['X-Tenant-Id', 'acme'], ['Host', 'acme.example.com']])]);
  let n = 0;
  for (const [name, ev] of all) {
    for (const p of paths(ev)) {
      for (const r of REPLACEMENTS) {
        await answer(mutate(ev, p, r), `${name} ${p.join('.')} := ${r === undefined ? '(removed)' : JSON.stringify(r)}`);
        n++;
      }
    }
  }
  assert.ok(n > 4000, `only ${n} mutations`);
});

test('tenants from a JWT: every sample, and every field of a JWT-bearing event, mutated', async () => {
  const token = jwtCorpus.find((v) => v.tenant === 'acme').authorization;
  const all = samples();
  all.push(['jwt', event('POST', [['Authorization', token], ['Host', 'acme.example.com']])]);
  let n = 0;
  for (const [name, ev] of all) {
    await answer(structuredClone(ev), `${name} (jwt)`, jwtHandler);
    for (const p of paths(ev)) {
      for (const r of REPLACEMENTS) {
        await answer(mutate(ev, p, r), `${name} ${p.join('.')} := ${r === undefined ? '(removed)' : JSON.stringify(r)} (jwt)`, jwtHandler);
        n++;
      }
    }
  }
  assert.ok(n > 4000, `only ${n} mutations`);
});

test('every Authorization value of the JWT corpus gets an answer: routed by its claim, or a 400', async () => {
  let routed = 0;
  for (const v of jwtCorpus) {
    const status = await answer(event('GET', [['Authorization', v.authorization]]), `Authorization: ${v.authorization.slice(0, 120)}`, jwtHandler);
    assert.equal(status, v.tenant === '' ? '400' : 'forward', v.authorization.slice(0, 120));
    if (status === 'forward') routed++;
  }
  assert.ok(routed >= 100);
});

test('the malformed events that used to throw', async () => {
  const good = () => event('GET', [['X-Tenant-Id', 'acme']]);
  const req = (ev) => ev.Records[0].cf.request;
  const cases = [
    ['headers missing', (ev) => delete req(ev).headers, '502'],
    ['headers null', (ev) => (req(ev).headers = null), '502'],
    ['header entry [null]', (ev) => (req(ev).headers['x-tenant-id'] = [null]), '502'],
    ['other header entry [null]', (ev) => (req(ev).headers.accept = [null]), '502'],
    ['header value not a string', (ev) => (req(ev).headers['x-tenant-id'] = [{ key: 'X-Tenant-Id', value: 42 }]), '502'],
    ['request missing', (ev) => delete ev.Records[0].cf.request, '502'],
    ['cf missing', (ev) => delete ev.Records[0].cf, '502'],
    ['Records missing', (ev) => delete ev.Records, '502'],
    ['Records empty', (ev) => (ev.Records = []), '502'],
    ['origin.custom a string', (ev) => (req(ev).origin.custom = 'example.com'), '502'],
    ['origin a string', (ev) => (req(ev).origin = 'example.com'), '502'],
    ['origin missing', (ev) => delete req(ev).origin, '502'],
    ['uri a number', (ev) => (req(ev).uri = 7), '502'],
    ['no tenant at all', (ev) => (req(ev).headers = {}), '400'],
  ];
  for (const [what, change, status] of cases) {
    const ev = good();
    change(ev);
    assert.equal(await answer(ev, what), status, what);
  }
  for (const ev of [undefined, null, 'event', 42, [], {}]) {
    assert.equal(await answer(ev, JSON.stringify(ev) ?? 'undefined'), '502');
  }
});

test('an event whose fields throw when read gets a 502, not an exception', async () => {
  const ev = event('GET', [['X-Tenant-Id', 'acme']]);
  Object.defineProperty(ev.Records[0].cf.request, 'headers', {
    get() {
      throw new Error('boom');
    },
  });
  const errors = [];
  const orig = console.error;
  console.error = (...a) => errors.push(a.join(' '));
  try {
    assert.equal(await answer(ev, 'throwing getter'), '502');
  } finally {
    console.error = orig;
  }
  assert.match(errors.join('\n'), /boom/, 'the error is logged for the operator');
});
