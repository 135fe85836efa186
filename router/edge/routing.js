'use strict';
// Cell routing for CloudFront Lambda@Edge (origin-request).
//
// The function package holds config.json (the function's settings and a
// manifest of the table) and routing.img (the table: image.js), both made
// by the Go package router/edge from stacks/routing.json and read once per
// container, at cold start. A request costs one pass over the tenant id,
// an array load and, for overrides, a directory slot and a word compare,
// with no network call. The Go package router is the source of truth for
// hashing and tenant-id validity; golden.test.js checks this file against
// the vectors and images Go writes to testdata/routing.

const fs = require('node:fs');
const path = require('node:path');
const { isUtf8 } = require('node:buffer');
const { compileLanes, lanesValue } = require('./lanes');
const { readImage, findOverride, overrideCell, overrideRejectsWrites } = require('./image');

const CONFIG_FORMAT = 2;
const MAX_TENANT_BYTES = 128;
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

function fail(msg) {
  throw new Error('edge routing config: ' + msg);
}

// The Authorization header's bearer token, read for its tenant claim. The
// token is NOT verified: the edge uses the claim only to pick a cell, and
// the cell authenticates the token as it would without the router (a
// forged claim reaches a cell that refuses it). Malformed in any way, the
// request has no tenant (400), as an invalid X-Tenant-Id has none. The
// same rules as TenantFromJWT in model.go.
const MAX_AUTHORIZATION = 8192;
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

// tenantFromJWT is the string value of claim in the payload of the bearer
// JWT in value ("Bearer <header>.<payload>.<signature>"), or '' when there
// is none: another scheme, not three base64url segments, a payload that
// is not UTF-8 JSON text of an object, no such member, or a member that is
// not a string.
function tenantFromJWT(value, claim) {
  if (typeof value !== 'string' || value.length < 8 || value.length > MAX_AUTHORIZATION) return '';
  // RFC 6750 §2.1: "Bearer" 1*SP b64token; the scheme is case-insensitive (RFC 9110 §11.1).
  if (value.slice(0, 6).toLowerCase() !== 'bearer' || value.charCodeAt(6) !== 0x20) return '';
  let i = 7;
  while (i < value.length && value.charCodeAt(i) === 0x20) i++;
  const token = value.slice(i);
  if (!JWT_SHAPE.test(token)) return '';
  const d1 = token.indexOf('.');
  const payload = token.slice(d1 + 1, token.indexOf('.', d1 + 1));
  if (payload.length % 4 === 1) return ''; // not base64url of whole bytes
  const bytes = Buffer.from(payload, 'base64url');
  if (!isUtf8(bytes)) return '';
  let doc;
  try {
    doc = JSON.parse(bytes.toString('utf8'));
  } catch (err) {
    return '';
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc) || !Object.prototype.hasOwnProperty.call(doc, claim)) return '';
  const v = doc[claim];
  return typeof v === 'string' ? v : '';
}

// compile checks config.json against the routing image (the bytes of
// routing.img) and builds the handler's table. It throws on anything
// malformed: a broken package must fail at cold start — the function then
// answers a 5xx saying so — never route traffic somewhere.
function compile(cfg, imageBytes) {
  if (!cfg || typeof cfg !== 'object' || Array.isArray(cfg)) fail('not an object');
  if (cfg.format !== CONFIG_FORMAT) fail(`format ${cfg.format}, this handler reads format ${CONFIG_FORMAT}`);
  if (!Number.isInteger(cfg.version) || cfg.version < 1) fail('version must be a positive integer');
  const from = cfg.tenantFrom === undefined ? 'header' : cfg.tenantFrom;
  if (from !== 'header' && from !== 'jwt') fail('tenantFrom must be "header" or "jwt"');
  if (from === 'header' && (typeof cfg.tenantHeader !== 'string' || cfg.tenantHeader === '')) fail('tenantHeader must be a header name');
  if (from === 'jwt' && (typeof cfg.tenantClaim !== 'string' || !/^[\x21\x23-\x5b\x5d-\x7e]{1,128}$/.test(cfg.tenantClaim))) {
    fail('tenantClaim must be a claim name (1-128 printable ASCII characters without quotes or backslashes)');
  }
  const im = cfg.image;
  if (!im || typeof im !== 'object' || typeof im.file !== 'string' || !Number.isInteger(im.bytes) || typeof im.crc32 !== 'string') {
    fail('image must be {"file", "bytes", "crc32"}');
  }
  const img = readImage(imageBytes);
  if (img.bytes !== im.bytes || img.crc32 !== im.crc32) fail(`${im.file} is not the image this config names (${img.bytes} bytes, crc32 ${img.crc32}; config.json says ${im.bytes}, ${im.crc32})`);
  if (img.version !== cfg.version) fail(`version ${cfg.version}, the image holds table version ${img.version}`);
  if (typeof cfg.checksum !== 'string' || cfg.checksum !== img.checksum) fail(`checksum ${JSON.stringify(cfg.checksum)}, the image holds ${JSON.stringify(img.checksum)}`);
  const generatedAt = cfg.generatedAt === undefined ? '' : cfg.generatedAt;
  if (generatedAt !== img.generatedAt) fail(`generatedAt ${JSON.stringify(generatedAt)}, the image holds ${JSON.stringify(img.generatedAt)}`);

  // The manifest's origins are the image's: every cell with an origin,
  // with the same one (config.json is what people and tools read).
  const index = new Map();
  img.cells.forEach((c, i) => index.set(c, i));
  const origins = cfg.origins === undefined ? {} : cfg.origins;
  if (!origins || typeof origins !== 'object' || Array.isArray(origins)) fail('origins must be an object of cell → DNS name');
  for (const [cell, origin] of Object.entries(origins)) {
    if (!index.has(cell)) fail(`origins names unknown cell ${JSON.stringify(cell)}`);
    if (origin !== img.origins[index.get(cell)]) fail(`the origin of ${cell} is ${JSON.stringify(origin)}, the image has ${JSON.stringify(img.origins[index.get(cell)])}`);
  }
  img.cells.forEach((c, i) => {
    if (img.origins[i] !== '' && !Object.prototype.hasOwnProperty.call(origins, c)) fail(`origins lacks ${c}, which the image routes to ${img.origins[i]}`);
  });

  const hostDomains = cfg.tenantHostDomains === undefined ? [] : cfg.tenantHostDomains;
  if (!Array.isArray(hostDomains) || hostDomains.some((d) => typeof d !== 'string' || d === '' || d !== d.toLowerCase())) {
    fail('tenantHostDomains must be an array of lowercase domain names');
  }
  // Shuffle-sharding lanes per cell (optional: a cell without them gets
  // no X-Cell-Lanes).
  const lanes = compileLanes(cfg.lanes, index, img.cells.length, fail);

  const retryAfter = Number.isInteger(cfg.retryAfterSeconds) && cfg.retryAfterSeconds > 0 ? cfg.retryAfterSeconds : 30;
  return {
    version: cfg.version,
    checksum: img.checksum,
    buckets: img.buckets,
    // 2^32 mod B, to reduce the 64-bit hash modulo B from its halves.
    two32ModB: img.two32ModB,
    tenantFrom: from,
    tenantHeader: from === 'header' ? cfg.tenantHeader.toLowerCase() : '',
    tenantClaim: from === 'jwt' ? cfg.tenantClaim : '',
    hostDomains: hostDomains.slice(),
    retryAfter: String(retryAfter),
    cells: img.cells,
    origins: img.origins,
    bucketCell: img.bucketCell,
    image: img,
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
  const o = findOverride(rt.image, tenant, hashHi, hashLo);
  const idx = o < 0 ? rt.bucketCell[bucket] : overrideCell(rt.image, o);
  const l = rt.lanes[idx];
  return {
    valid: true,
    bucket,
    cell: rt.cells[idx],
    override: o >= 0,
    rejectWrites: o >= 0 && overrideRejectsWrites(rt.image, o),
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
  const where =
    rt.tenantFrom === 'jwt'
      ? `Send a bearer JWT in the Authorization header whose "${rt.tenantClaim}" claim is the tenant id`
      : `Send it in the ${rt.tenantHeader} header`;
  return {
    status: '400',
    statusDescription: 'Bad Request',
    headers: plainHeaders(),
    body:
      `400 Bad Request: no valid tenant id. ${where}` +
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
  const th = rt.tenantFrom === 'jwt' ? headers.authorization : headers[rt.tenantHeader];
  if (Array.isArray(th) && th.length > 0) {
    tenant = rt.tenantFrom === 'jwt' ? tenantFromJWT(th[0].value, rt.tenantClaim) : th[0].value;
  } else {
    const hh = headers.host;
    if (Array.isArray(hh) && hh.length > 0) tenant = tenantFromHostIn(hh[0].value, rt.hostDomains);
  }
  if (!scanTenant(tenant)) return badRequest(rt);

  let idx;
  const o = findOverride(rt.image, tenant, hashHi, hashLo);
  if (o < 0) {
    idx = rt.bucketCell[bucketOfHash(rt)];
  } else {
    idx = overrideCell(rt.image, o);
    if (overrideRejectsWrites(rt.image, o) && !isRead(request.method)) return writeRejected(rt);
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

// createHandler compiles a config and its image and returns the
// Lambda@Edge handler.
function createHandler(cfg, imageBytes) {
  const rt = compile(cfg, imageBytes);
  const handler = async (event) => guarded(rt, event);
  handler.routingTable = rt;
  return handler;
}

// readPackage reads the function package in dir as the handler does at
// cold start: config.json, then the image it names (read into a buffer
// of its own, which the image's typed arrays view).
function readPackage(dir) {
  let cfg;
  try {
    cfg = JSON.parse(fs.readFileSync(path.join(dir, 'config.json'), 'utf8'));
  } catch (err) {
    fail(`config.json: ${err.message}`);
  }
  const file = cfg && cfg.image && typeof cfg.image.file === 'string' ? cfg.image.file : '';
  if (!/^[A-Za-z0-9._-]+$/.test(file) || file.startsWith('.')) fail('image.file must name a file of the package');
  let bytes;
  let fd = -1;
  try {
    fd = fs.openSync(path.join(dir, file), 'r');
    const size = fs.fstatSync(fd).size;
    bytes = Buffer.allocUnsafeSlow(size);
    for (let off = 0; off < size; ) {
      const n = fs.readSync(fd, bytes, off, size - off, off);
      if (n === 0) break;
      off += n;
    }
  } catch (err) {
    fail(`${file}: ${err.message}`);
  } finally {
    if (fd >= 0) fs.closeSync(fd);
  }
  return { cfg, image: bytes };
}

// loadHandler is the handler of the package in dir. A package that does
// not load (a corrupt or truncated image, a config that does not match
// it) is logged once and every request is answered 503 saying so: the
// function never routes by a half-read table.
function loadHandler(dir) {
  try {
    const { cfg, image } = readPackage(dir);
    return createHandler(cfg, image);
  } catch (err) {
    console.error('cell router: the function package was refused at cold start; answering 503 to every request:', err && err.message);
    const handler = async () => refused();
    handler.loadError = err;
    return handler;
  }
}

function refused() {
  return {
    status: '503',
    statusDescription: 'Service Unavailable',
    headers: plainHeaders(),
    body: '503 Service Unavailable: the cell router refused its routing table at start (the image is corrupt, truncated or does not match its config), so it routes no request; this is a router deployment error, see the function logs.\n',
  };
}

module.exports = {
  CONFIG_FORMAT,
  MAX_TENANT_BYTES,
  FORBIDDEN,
  compile,
  createHandler,
  readPackage,
  loadHandler,
  handleRequest,
  route,
  scanTenant,
  fnv1a64Hex,
  tenantFromHost,
  tenantFromHostIn,
  tenantFromJWT,
  isRead,
};
