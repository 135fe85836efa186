'use strict';
// Cell routing for CloudFront Lambda@Edge (origin-request).
//
// The routing table is compiled once per container from config.json (made
// by the Go package router/edge from stacks/routing.json); a request costs
// one pass over the tenant id and two array/Map lookups, with no network
// call. The Go package router is the source of truth for hashing and
// tenant-id validity; test/golden.test.js checks this file against the
// vectors Go writes to testdata/routing.

const { compileLanes, lanesValue } = require('./lanes');

const CONFIG_FORMAT = 1;
const MAX_TENANT_BYTES = 128;
const MAX_BUCKETS = 1 << 20;
const TWO_32 = 4294967296;

// Code point ranges a tenant id must not contain (inclusive); the same list
// as forbiddenRanges in router/tenant.go. Printable ASCII 0x21-0x7E is
// checked inline before this list is consulted.
const FORBIDDEN = [
  [0x0000, 0x0020], // C0 controls and space
  [0x007f, 0x00a0], // DEL, C1 controls, no-break space
  [0x00ad, 0x00ad], // soft hyphen
  [0x1680, 0x1680], // ogham space mark
  [0x180e, 0x180e], // mongolian vowel separator
  [0x2000, 0x200f], // spaces, zero-width space/joiners, LRM, RLM
  [0x2028, 0x202f], // line/paragraph separators, bidi embeddings, narrow no-break space
  [0x205f, 0x206f], // medium math space, word joiner, invisible operators, bidi isolates
  [0x3000, 0x3000], // ideographic space
  [0xd800, 0xdfff], // surrogates (a lone surrogate in a JS string)
  [0xfeff, 0xfeff], // byte order mark
  [0xfff0, 0xffff], // specials, including U+FFFD replacement character
];

function forbidden(cp) {
  for (let i = 0; i < FORBIDDEN.length; i++) {
    const r = FORBIDDEN[i];
    if (cp < r[0]) return false;
    if (cp <= r[1]) return true;
  }
  return false;
}

// FNV-1a 64 over the UTF-8 bytes of the tenant id, as two 32-bit halves.
// scanTenant leaves the hash in these module variables so the hot path
// allocates nothing (a handler invocation runs to completion before the
// next one starts: there is no concurrency within a container).
let hashHi = 0;
let hashLo = 0;
const utf8 = new Uint8Array(4);

// scanTenant validates a tenant id and hashes it in one pass over its UTF-16
// code units, encoding to UTF-8 on the fly. It returns false for an invalid
// id (then the hash is meaningless).
//
// Multiplying by the FNV prime 2^40 + 0x1b3 modulo 2^64, in halves:
//   lo' = lo*0x1b3 mod 2^32
//   hi' = hi*0x1b3 + carry(lo*0x1b3) + lo<<8   (mod 2^32)
// Every intermediate stays below 2^53, so doubles are exact.
function scanTenant(s) {
  if (typeof s !== 'string') return false;
  const n = s.length;
  // Every UTF-16 unit is at least one UTF-8 byte.
  if (n === 0 || n > MAX_TENANT_BYTES) return false;
  let hi = 0xcbf29ce4;
  let lo = 0x84222325;
  let t = 0;
  let bytes = 0;
  for (let i = 0; i < n; i++) {
    let c = s.charCodeAt(i);
    if (c < 0x80) {
      if (c <= 0x20 || c === 0x7f) return false;
      lo = (lo ^ c) >>> 0;
      t = lo * 0x1b3;
      hi = (hi * 0x1b3 + ((t / TWO_32) | 0) + (lo << 8)) >>> 0;
      lo = t >>> 0;
      bytes++;
      continue;
    }
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = i + 1 < n ? s.charCodeAt(i + 1) : 0;
      if (d < 0xdc00 || d > 0xdfff) return false; // lone high surrogate
      c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
      i++;
    }
    if (forbidden(c)) return false; // includes lone low surrogates
    // Up to four UTF-8 bytes, most significant first.
    let k;
    if (c < 0x800) {
      utf8[0] = 0xc0 | (c >> 6);
      utf8[1] = 0x80 | (c & 0x3f);
      k = 2;
    } else if (c < 0x10000) {
      utf8[0] = 0xe0 | (c >> 12);
      utf8[1] = 0x80 | ((c >> 6) & 0x3f);
      utf8[2] = 0x80 | (c & 0x3f);
      k = 3;
    } else {
      utf8[0] = 0xf0 | (c >> 18);
      utf8[1] = 0x80 | ((c >> 12) & 0x3f);
      utf8[2] = 0x80 | ((c >> 6) & 0x3f);
      utf8[3] = 0x80 | (c & 0x3f);
      k = 4;
    }
    for (let j = 0; j < k; j++) {
      lo = (lo ^ utf8[j]) >>> 0;
      t = lo * 0x1b3;
      hi = (hi * 0x1b3 + ((t / TWO_32) | 0) + (lo << 8)) >>> 0;
      lo = t >>> 0;
    }
    bytes += k;
  }
  hashHi = hi;
  hashLo = lo;
  return bytes <= MAX_TENANT_BYTES;
}

function hex32(x) {
  return x.toString(16).padStart(8, '0');
}

// fnv1a64Hex is the tenant's hash as 16 hex digits, or null when the id is
// invalid (for tests and debugging).
function fnv1a64Hex(tenant) {
  return scanTenant(tenant) ? hex32(hashHi) + hex32(hashLo) : null;
}

// The first DNS label of a Host header value, ASCII-lowercased: host names
// are case-insensitive, tenant ids are not. "" when there is none.
function tenantFromHost(host) {
  if (typeof host !== 'string' || host.length === 0 || host.charCodeAt(0) === 0x5b /* [ IPv6 */) return '';
  let end = host.length;
  let upper = false;
  for (let i = 0; i < end; i++) {
    const c = host.charCodeAt(i);
    if (c === 0x2e /* . */ || c === 0x3a /* : */) {
      end = i;
      break;
    }
    if (c >= 0x41 && c <= 0x5a) upper = true;
  }
  const label = end === host.length ? host : host.slice(0, end);
  return upper ? label.replace(/[A-Z]+/g, (m) => m.toLowerCase()) : label;
}

// lookalike returns an earlier override tenant that is canonically
// equivalent to tenant (equal in NFC, not equal as strings), or null — the
// rule of lookalike in router/validate.go: tenant ids are compared as they
// are (the hash is over their bytes; nothing is normalised), and a table
// that routes "café" in NFC and in NFD separately is refused. Go refuses
// such a table at plan; this is the same check at cold start.
function lookalike(tenant, nfc, seen) {
  let ascii = true;
  for (let i = 0; i < tenant.length; i++) {
    if (tenant.charCodeAt(i) >= 0x80) {
      ascii = false;
      break;
    }
  }
  if (ascii) return nfc.size > 0 && nfc.has(tenant) ? nfc.get(tenant) : null;
  const key = tenant.normalize('NFC');
  if (nfc.has(key)) return nfc.get(key);
  nfc.set(key, tenant);
  if (key !== tenant && seen.has(key)) return key;
  return null;
}

// tenantFromHostIn is the tenant a Host names under one of the tenant host
// domains (lowercase): the first label when the rest, without port and
// trailing dot, ASCII-lowercased, is exactly one of them; '' otherwise. The
// same rule as TenantFromHostIn in model.go. Without domains the Host is
// never a tenant: viewers may only reach the distribution's own name.
function tenantFromHostIn(host, domains) {
  if (domains.length === 0 || typeof host !== 'string' || host.length === 0 || host.charCodeAt(0) === 0x5b /* [ IPv6 */) return '';
  let end = host.indexOf(':');
  if (end < 0) end = host.length;
  if (end > 0 && host.charCodeAt(end - 1) === 0x2e /* . */) end--;
  const dot = host.indexOf('.');
  if (dot < 0 || dot >= end) return '';
  const rest = host.slice(dot + 1, end).replace(/[A-Z]+/g, (m) => m.toLowerCase());
  for (let i = 0; i < domains.length; i++) {
    if (domains[i] === rest) return host.slice(0, dot).replace(/[A-Z]+/g, (m) => m.toLowerCase());
  }
  return '';
}

function isRead(method) {
  return method === 'GET' || method === 'HEAD' || method === 'OPTIONS';
}

// isDNSName is validDNSName in edge.go: labels of 1-63 letters, digits
// and hyphens, not starting or ending with a hyphen, at most 253 bytes.
function isDNSName(s) {
  if (typeof s !== 'string' || s.length === 0 || s.length > 253) return false;
  const labels = (s.endsWith('.') ? s.slice(0, -1) : s).split('.');
  for (let i = 0; i < labels.length; i++) {
    if (!/^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/.test(labels[i])) return false;
  }
  return true;
}

function fail(msg) {
  throw new Error('edge routing config: ' + msg);
}

// compile checks config.json and builds the lookup structures. It throws on
// anything malformed: a broken config must fail the deployment's smoke test,
// not route traffic somewhere.
function compile(cfg) {
  if (!cfg || typeof cfg !== 'object') fail('not an object');
  if (cfg.format !== CONFIG_FORMAT) fail(`format ${cfg.format}, this handler reads format ${CONFIG_FORMAT}`);
  const B = cfg.buckets;
  if (!Number.isInteger(B) || B < 1 || B > MAX_BUCKETS) fail(`buckets must be an integer from 1 to ${MAX_BUCKETS}`);
  if (!Number.isInteger(cfg.version) || cfg.version < 1) fail('version must be a positive integer');
  if (typeof cfg.tenantHeader !== 'string' || cfg.tenantHeader === '') fail('tenantHeader must be a header name');
  const cells = cfg.cells;
  if (!Array.isArray(cells) || cells.length === 0 || cells.length > 65535) fail('cells must be a non-empty array');
  const index = new Map();
  cells.forEach((c, i) => {
    if (typeof c !== 'string' || index.has(c)) fail(`cells[${i}] must be a unique cell id`);
    index.set(c, i);
  });

  const origins = new Array(cells.length).fill('');
  for (const [cell, origin] of Object.entries(cfg.origins || {})) {
    if (!index.has(cell)) fail(`origins names unknown cell ${JSON.stringify(cell)}`);
    // The domain the handler gives CloudFront per request: the
    // distribution does not hold it (one origin for the fleet), so a bad
    // one is refused here, at start, not on a tenant's request.
    if (!isDNSName(origin)) fail(`origin of ${cell} must be a DNS name`);
    origins[index.get(cell)] = origin;
  }

  const bucketCell = new Uint16Array(B);
  const runs = cfg.bucketRuns;
  if (!Array.isArray(runs) || runs.length % 2 !== 0) fail('bucketRuns must be [count, cell index, ...] pairs');
  let b = 0;
  for (let i = 0; i < runs.length; i += 2) {
    const count = runs[i];
    const cell = runs[i + 1];
    if (!Number.isInteger(count) || count < 1 || b + count > B) fail(`bucketRuns[${i}] count out of range`);
    if (!Number.isInteger(cell) || cell < 0 || cell >= cells.length) fail(`bucketRuns[${i + 1}] is not a cell index`);
    bucketCell.fill(cell, b, b + count);
    b += count;
  }
  if (b !== B) fail(`bucketRuns cover ${b} buckets, the table has ${B}`);

  // A Map, not the parsed object: tenant ids like "constructor" must not
  // find Object.prototype members.
  const overrides = new Map();
  const nfc = new Map();
  for (const [tenant, o] of Object.entries(cfg.overrides || {})) {
    if (!o || !index.has(o.cell)) fail(`override of ${JSON.stringify(tenant)} names unknown cell ${JSON.stringify(o && o.cell)}`);
    const twin = lookalike(tenant, nfc, overrides);
    if (twin !== null) {
      fail(`overrides ${JSON.stringify(tenant)} and ${JSON.stringify(twin)} are the same text in different Unicode normalization forms; one table must not route them separately`);
    }
    overrides.set(tenant, { cell: index.get(o.cell), rejectWrites: o.rejectWrites === true });
  }

  const hostDomains = cfg.tenantHostDomains === undefined ? [] : cfg.tenantHostDomains;
  if (!Array.isArray(hostDomains) || hostDomains.some((d) => typeof d !== 'string' || d === '' || d !== d.toLowerCase())) {
    fail('tenantHostDomains must be an array of lowercase domain names');
  }
  // Shuffle-sharding lanes per cell (optional: a cell without them gets
  // no X-Cell-Lanes).
  const lanes = compileLanes(cfg.lanes, index, cells.length, fail);

  const retryAfter = Number.isInteger(cfg.retryAfterSeconds) && cfg.retryAfterSeconds > 0 ? cfg.retryAfterSeconds : 30;
  return {
    version: cfg.version,
    buckets: B,
    // 2^32 mod B, to reduce the 64-bit hash modulo B from its halves.
    two32ModB: TWO_32 % B,
    tenantHeader: cfg.tenantHeader.toLowerCase(),
    hostDomains: hostDomains.slice(),
    retryAfter: String(retryAfter),
    cells,
    origins,
    bucketCell,
    overrides,
    lanes,
  };
}

function bucketOfHash(rt) {
  const B = rt.buckets;
  return ((hashHi % B) * rt.two32ModB + (hashLo % B)) % B;
}

// route resolves a tenant id against a compiled table:
// {valid, bucket, cell, override, rejectWrites, lanes}; lanes is the
// X-Cell-Lanes value in the tenant's cell, or null when it has no lanes.
function route(rt, tenant) {
  if (!scanTenant(tenant)) return { valid: false, bucket: -1, cell: null, override: false, rejectWrites: false, lanes: null };
  const bucket = bucketOfHash(rt);
  const o = rt.overrides.get(tenant);
  const idx = o === undefined ? rt.bucketCell[bucket] : o.cell;
  const l = rt.lanes[idx];
  return {
    valid: true,
    bucket,
    cell: rt.cells[idx],
    override: o !== undefined,
    rejectWrites: o !== undefined && o.rejectWrites,
    lanes: l === null ? null : lanesValue(l, hashHi, hashLo),
  };
}

function plainHeaders(extra) {
  const h = {
    'content-type': [{ key: 'Content-Type', value: 'text/plain; charset=utf-8' }],
    'cache-control': [{ key: 'Cache-Control', value: 'no-store' }],
  };
  return extra ? Object.assign(h, extra) : h;
}

function badRequest(rt) {
  return {
    status: '400',
    statusDescription: 'Bad Request',
    headers: plainHeaders(),
    body:
      `400 Bad Request: no valid tenant id. Send it in the ${rt.tenantHeader} header` +
      (rt.hostDomains.length > 0 ? ` or as the first label of a host name under ${rt.hostDomains.join(', ')}. ` : '. ') +
      'A tenant id is 1-128 bytes of UTF-8 without whitespace, control or invisible formatting characters.\n',
  };
}

function writeRejected(rt) {
  return {
    status: '503',
    statusDescription: 'Service Unavailable',
    headers: plainHeaders({ 'retry-after': [{ key: 'Retry-After', value: rt.retryAfter }] }),
    body: `503 Service Unavailable: this tenant is moving to another cell and writes are paused. Retry after ${rt.retryAfter} seconds; reads still work.\n`,
  };
}

function badGateway(msg) {
  return { status: '502', statusDescription: 'Bad Gateway', headers: plainHeaders(), body: `502 Bad Gateway: ${msg}\n` };
}

// ---- guards: the handler answers every event, never throws -------------
//
// CloudFront turns an exception into a 5xx for the tenant with no word of
// why; a malformed event (none has been seen from CloudFront, but a test
// harness, a replay tool or a future event version can send one) gets a
// 502 that says what is wrong instead. These checks only read the event.

function isObject(v) {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

// requestOf returns event.Records[0].cf.request, or null when any step of
// that path is missing or of the wrong type.
function requestOf(event) {
  if (!isObject(event)) return null;
  const records = event.Records;
  if (!Array.isArray(records) || records.length === 0 || !isObject(records[0])) return null;
  const cf = records[0].cf;
  if (!isObject(cf) || !isObject(cf.request)) return null;
  const r = cf.request;
  // Returned to CloudFront as they came: they must have CloudFront's types.
  for (const k of REQUEST_STRINGS) if (r[k] !== undefined && typeof r[k] !== 'string') return null;
  return r;
}

const REQUEST_STRINGS = ['method', 'uri', 'querystring', 'clientIp'];

// wellFormedHeaders checks CloudFront's header shape: an object of
// lowercase name → non-empty array of {key?, value: string}. The request is
// returned to CloudFront as it came (plus the router's headers), so a
// malformed entry would fail CloudFront's validation of the result anyway.
function wellFormedHeaders(headers) {
  if (!isObject(headers)) return false;
  for (const name in headers) {
    if (!Object.prototype.hasOwnProperty.call(headers, name)) continue;
    const list = headers[name];
    if (!Array.isArray(list) || list.length === 0) return false;
    for (let i = 0; i < list.length; i++) {
      const h = list[i];
      if (!isObject(h) || typeof h.value !== 'string' || (h.key !== undefined && typeof h.key !== 'string')) return false;
    }
  }
  return true;
}

function unreadableEvent() {
  return badGateway('the cell router received an event that is not a CloudFront origin-request event (Records[0].cf.request with headers as arrays of {key, value}); this is an edge configuration error.');
}

// guarded wraps the routing decision so that nothing escapes as an
// exception, whatever the event holds (getters that throw, proxies…).
function guarded(rt, event) {
  try {
    return handleRequest(rt, event);
  } catch (err) {
    console.error('cell router: unexpected error, answering 502:', err && err.stack ? err.stack : err);
    return badGateway('the cell router failed on this request; this is a router bug, see the function logs.');
  }
}

// handleRequest is the whole routing decision for one origin-request event.
// It returns the request to forward (rewritten to the tenant's cell) or a
// generated response.
function handleRequest(rt, event) {
  const request = requestOf(event);
  if (request === null) return unreadableEvent();
  const headers = request.headers;
  if (!wellFormedHeaders(headers)) return unreadableEvent();

  // Array checks, not truthiness: a header name like "constructor" must not
  // find Object.prototype members of the headers object.
  let tenant = '';
  const th = headers[rt.tenantHeader];
  if (Array.isArray(th) && th.length > 0) {
    tenant = th[0].value;
  } else {
    const hh = headers.host;
    if (Array.isArray(hh) && hh.length > 0) tenant = tenantFromHostIn(hh[0].value, rt.hostDomains);
  }
  if (!scanTenant(tenant)) return badRequest(rt);

  let idx;
  const o = rt.overrides.get(tenant);
  if (o === undefined) {
    idx = rt.bucketCell[bucketOfHash(rt)];
  } else {
    idx = o.cell;
    if (o.rejectWrites && !isRead(request.method)) return writeRejected(rt);
  }

  const cell = rt.cells[idx];
  const origin = rt.origins[idx];
  if (origin === '') {
    return badGateway(`routing table version ${rt.version} sends this tenant to ${cell}, which has no origin in this edge function; this is a router configuration error.`);
  }
  const custom = isObject(request.origin) ? request.origin.custom : undefined;
  if (!isObject(custom)) return badGateway('the cell router needs a custom origin on this cache behavior; this is a router configuration error.');

  // Only the domain changes: port, protocol, path, timeouts and the
  // customHeaders CloudFront attached (X-Origin-Verify) stay as they came.
  // The distribution has one origin for the whole fleet; an origin-request
  // function may update the origin object to route a request to an origin
  // the distribution does not define (CloudFront Developer Guide,
  // "Lambda@Edge event structure › Dynamic origin selection"). Host must
  // name the cell too: CloudFront validates the cell's certificate against
  // the origin domain or the forwarded Host, and the cell's ALB answers
  // 421 to a Host of another cell.
  custom.domainName = origin;
  headers.host = [{ key: 'Host', value: origin }];
  headers['x-cell-id'] = [{ key: 'X-Cell-Id', value: cell }];
  headers['x-routing-version'] = [{ key: 'X-Routing-Version', value: String(rt.version) }];
  // The tenant's lanes in its cell; a viewer's own X-Cell-Lanes never
  // reaches the cell.
  const l = rt.lanes[idx];
  if (l === null) delete headers['x-cell-lanes'];
  else headers['x-cell-lanes'] = [{ key: 'X-Cell-Lanes', value: lanesValue(l, hashHi, hashLo) }];
  return request;
}

// createHandler compiles a config and returns the Lambda@Edge handler.
function createHandler(cfg) {
  const rt = compile(cfg);
  const handler = async (event) => guarded(rt, event);
  handler.routingTable = rt;
  return handler;
}

module.exports = {
  CONFIG_FORMAT,
  MAX_TENANT_BYTES,
  FORBIDDEN,
  compile,
  createHandler,
  handleRequest,
  lookalike,
  route,
  scanTenant,
  fnv1a64Hex,
  tenantFromHost,
  tenantFromHostIn,
  isRead,
};
