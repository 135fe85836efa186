'use strict';
// The routing image at the edge: read once per container, at cold start,
// into typed arrays over the file's own bytes — no JSON to parse and no
// object per override. The format is defined (and written) by the Go
// package router/edge, image.go; ReadImage there makes the same checks in
// the same order with the same messages, and testdata/routing/image-bad
// holds both sides to them. A refused image throws: the handler then
// answers every request with a 5xx that says so (index.js), it never
// routes by a half-read table.

const zlib = require('node:zlib');

const MAGIC = 'CELLRIMG';
const FORMAT = 1;
const HEADER_BYTES = 64;
const CRC_OFFSET = 44;
const MAX_BUCKETS = 1 << 20;
const MAX_CELLS = 4096;
const MAX_OVERRIDES = 1000000;
const MAX_DIR_BITS = 20;
const MAX_VERSION = 9007199254740991;
const MASK7 = 0x7f7f7f7f;
const MIGRATING = 1 << 24;
const WRITE_ALLOW = 1;
const WRITE_REJECT = 2;
const CELL_ID = /^cell-[a-z0-9]+(-[a-z0-9]+)*$/;

function fail(msg) {
  throw new Error('edge routing image: ' + msg);
}

// u28 is the value of a 7-bit-per-byte little-endian word.
function u28(x) {
  return (x & 0x7f) | ((x >>> 1) & 0x3f80) | ((x >>> 2) & 0x1fc000) | ((x >>> 3) & 0xfe00000);
}

// CRC-32 (IEEE): zlib's where Node has it (20.15 and later), else a table.
let CRC_TABLE = null;
function crcTable() {
  if (CRC_TABLE === null) {
    CRC_TABLE = new Int32Array(256);
    for (let i = 0; i < 256; i++) {
      let c = i;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      CRC_TABLE[i] = c;
    }
  }
  return CRC_TABLE;
}
function crc32(bytes, crc) {
  if (typeof zlib.crc32 === 'function') return zlib.crc32(bytes, crc);
  const t = crcTable();
  let c = ~crc;
  for (let i = 0; i < bytes.length; i++) c = t[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return ~c >>> 0;
}

function imageCRC(b) {
  return crc32(b.subarray(CRC_OFFSET + 8), crc32(b.subarray(0, CRC_OFFSET), 0));
}

function hex8(x) {
  return (x >>> 0).toString(16).padStart(8, '0');
}

function pad4(n) {
  return (n + 3) & ~3;
}

function isDNSName(s) {
  if (s.length === 0 || s.length > 253) return false;
  const labels = (s.endsWith('.') ? s.slice(0, -1) : s).split('.');
  for (let i = 0; i < labels.length; i++) {
    if (!/^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/.test(labels[i])) return false;
  }
  return true;
}

// readImage checks the image in bytes (a Uint8Array the caller gives up:
// words are decoded in place) and returns its lookup structures.
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

function readImage(bytes) {
  // Typed arrays use the machine's byte order; Lambda@Edge runs x86_64.
  if (!LITTLE_ENDIAN) fail('this handler reads routing images on little-endian machines only');
  if (!(bytes instanceof Uint8Array)) fail('not a byte array');
  if (bytes.byteOffset % 4 !== 0) bytes = new Uint8Array(bytes); // typed word views need alignment
  const n = bytes.length;
  if (n < HEADER_BYTES) fail(`truncated: ${n} bytes, shorter than the ${HEADER_BYTES}-byte header`);
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, n);
  if (buf.toString('latin1', 0, 8) !== MAGIC) fail(`not a routing image: the file does not start with ${MAGIC}`);
  for (let i = 8; i < HEADER_BYTES; i++) {
    if (bytes[i] >= 0x80) fail(`header byte ${i} is not 7-bit clean: not a routing image`);
  }
  const head = new Uint32Array(bytes.buffer, bytes.byteOffset + 8, 14);
  const w = (i) => u28(head[i]);
  if (w(0) !== FORMAT) fail(`format ${w(0)}, this handler reads format ${FORMAT}`);
  if (w(1) !== HEADER_BYTES) fail(`a header of ${w(1)} bytes, this handler reads ${HEADER_BYTES}`);
  if (w(2) !== n) fail(`the header says ${w(2)} bytes, the file has ${n}: truncated or corrupt`);
  const stored = (w(9) | (w(10) << 28)) >>> 0;
  const computed = imageCRC(bytes);
  if (stored !== computed) fail(`checksum mismatch (crc32 ${hex8(stored)} stored, ${hex8(computed)} computed): the image is corrupt`);
  const version = w(3) + w(4) * 268435456;
  const B = w(5);
  const C = w(6);
  const N = w(7);
  const k = w(8);
  const S = w(11);
  if (version < 1 || version > MAX_VERSION) fail(`table version ${version} is out of range`);
  if (B < 1 || B > MAX_BUCKETS) fail(`${B} buckets, allowed 1 to ${MAX_BUCKETS}`);
  if (C < 1 || C > MAX_CELLS) fail(`${C} cells, allowed 1 to ${MAX_CELLS}`);
  if (N > MAX_OVERRIDES) fail(`${N} overrides, allowed at most ${MAX_OVERRIDES}`);
  if (k > MAX_DIR_BITS) fail(`${k} directory bits, allowed at most ${MAX_DIR_BITS}`);
  const slots = 2 ** k + 1;
  if (HEADER_BYTES + pad4(2 * B) + 4 * slots + 16 * N + pad4(S) !== n) {
    fail(`its sections (${B} buckets, 2^${k} directory slots, ${N} overrides, ${S} bytes of strings) do not add up to its ${n} bytes`);
  }

  let p = HEADER_BYTES;
  const bucketCell = new Uint16Array(bytes.buffer, bytes.byteOffset + p, B);
  for (let b = 0; b < B; b++) {
    const x = bucketCell[b];
    const c = (x & 0x7f) | ((x >>> 1) & 0x3f80);
    if (c >= C) fail(`bucket ${b} names cell ${c}, the image has ${C} cells`);
    bucketCell[b] = c;
  }
  p += pad4(2 * B);
  const dir = new Uint32Array(bytes.buffer, bytes.byteOffset + p, slots);
  let prev = 0;
  for (let s = 0; s < slots; s++) {
    const d = u28(dir[s]);
    if (d < prev || d > N || (s === 0 && d !== 0) || (s === slots - 1 && d !== N)) fail(`directory slot ${s} is out of order`);
    dir[s] = d;
    prev = d;
  }
  p += 4 * slots;
  const ent = new Uint32Array(bytes.buffer, bytes.byteOffset + p, 4 * N);
  for (let i = 0; i < N; i++) {
    const meta = u28(ent[4 * i + 3]);
    const cell = meta & 0xfff;
    const target = (meta >>> 12) & 0xfff;
    const mode = (meta >>> 25) & 3;
    if (cell >= C) fail(`override ${i} names cell ${cell}, the image has ${C} cells`);
    if (meta >>> 27 !== 0 || mode > WRITE_REJECT) fail(`override ${i} has an unknown state or write mode`);
    if ((meta & MIGRATING) === 0 && (target !== 0 || mode !== 0)) fail(`override ${i} is active but has a target or write mode`);
    if (target >= C) fail(`override ${i} names target cell ${target}, the image has ${C} cells`);
    ent[4 * i + 3] = meta;
  }
  p += 16 * N;

  const end = p + S;
  const next = (what) => {
    if (p + 2 > end) fail(`the strings end before ${what}`);
    const l = (bytes[p] & 0x7f) | ((bytes[p + 1] & 0x7f) << 7);
    if (p + 2 + l > end) fail(`the strings end inside ${what}`);
    for (let i = p + 2; i < p + 2 + l; i++) {
      if (bytes[i] < 0x20 || bytes[i] > 0x7e) fail(`${what} is not printable ASCII`);
    }
    const s = buf.toString('latin1', p + 2, p + 2 + l);
    p += 2 + l;
    return s;
  };
  const checksum = next('the table checksum');
  if (!/^sha256:[0-9a-f]{64}$/.test(checksum)) fail(`the table checksum ${JSON.stringify(checksum)} is not sha256: and 64 hex digits`);
  const generatedAt = next('generated_at');
  const cells = [];
  const origins = [];
  const seen = new Set();
  for (let i = 0; i < C; i++) {
    const id = next(`the id of cell ${i}`);
    if (id.length > 20 || !CELL_ID.test(id) || seen.has(id)) fail(`cell ${i}: ${JSON.stringify(id)} is not a unique cell id`);
    seen.add(id);
    const origin = next(`the origin of ${id}`);
    if (origin !== '' && !isDNSName(origin)) fail(`the origin of ${id} must be a DNS name`);
    cells.push(id);
    origins.push(origin);
  }
  if (p !== end) fail(`${end - p} bytes of strings after the last cell`);
  return { version, buckets: B, two32ModB: 4294967296 % B, checksum, generatedAt, crc32: hex8(computed), bytes: n, cells, origins, bucketCell, dirBits: k, dir, ent, overrides: N };
}

// hash2 is router.Hash2 of a valid tenant id (Jenkins' one-at-a-time and
// CRC-32 over its UTF-8 bytes), left in H2.
const H2 = new Uint32Array(2);
function hash2(s) {
  const t = crcTable();
  let a = 0;
  let c = -1;
  for (let i = 0; i < s.length; i++) {
    let cp = s.charCodeAt(i);
    let k;
    let b0;
    let b1 = 0;
    let b2 = 0;
    let b3 = 0;
    if (cp < 0x80) {
      b0 = cp;
      k = 1;
    } else {
      if (cp >= 0xd800 && cp <= 0xdbff) {
        cp = 0x10000 + ((cp - 0xd800) << 10) + (s.charCodeAt(++i) - 0xdc00);
      }
      if (cp < 0x800) {
        b0 = 0xc0 | (cp >> 6);
        b1 = 0x80 | (cp & 0x3f);
        k = 2;
      } else if (cp < 0x10000) {
        b0 = 0xe0 | (cp >> 12);
        b1 = 0x80 | ((cp >> 6) & 0x3f);
        b2 = 0x80 | (cp & 0x3f);
        k = 3;
      } else {
        b0 = 0xf0 | (cp >> 18);
        b1 = 0x80 | ((cp >> 12) & 0x3f);
        b2 = 0x80 | ((cp >> 6) & 0x3f);
        b3 = 0x80 | (cp & 0x3f);
        k = 4;
      }
    }
    for (let j = 0; j < k; j++) {
      const byte = j === 0 ? b0 : j === 1 ? b1 : j === 2 ? b2 : b3;
      a = (a + byte) | 0;
      a = (a + (a << 10)) | 0;
      a ^= a >>> 6;
      c = t[(c ^ byte) & 0xff] ^ (c >>> 8);
    }
  }
  a = (a + (a << 3)) | 0;
  a ^= a >>> 11;
  a = (a + (a << 15)) | 0;
  H2[0] = a;
  H2[1] = ~c;
}

// findOverride is the index of tenant's override (hi:lo its FNV-1a hash),
// or -1.
function findOverride(img, tenant, hi, lo) {
  if (img.overrides === 0) return -1;
  const slot = img.dirBits === 0 ? 0 : hi >>> (32 - img.dirBits);
  const ent = img.ent;
  const f1 = (lo & MASK7) >>> 0;
  let hashed = false;
  for (let i = img.dir[slot], end = img.dir[slot + 1]; i < end; i++) {
    if (ent[4 * i] !== f1) continue;
    if (!hashed) {
      hash2(tenant);
      hashed = true;
    }
    if (ent[4 * i + 1] === (H2[0] & MASK7) >>> 0 && ent[4 * i + 2] === (H2[1] & MASK7) >>> 0) return i;
  }
  return -1;
}

// Decoding an override's meta word.
function overrideCell(img, i) {
  return img.ent[4 * i + 3] & 0xfff;
}
function overrideRejectsWrites(img, i) {
  const meta = img.ent[4 * i + 3];
  return (meta & MIGRATING) !== 0 && ((meta >>> 25) & 3) === WRITE_REJECT;
}
function overrideInfo(img, i) {
  const meta = img.ent[4 * i + 3];
  if ((meta & MIGRATING) === 0) return { state: 'active', target: '', writeMode: '' };
  const mode = (meta >>> 25) & 3;
  return { state: 'migrating', target: img.cells[(meta >>> 12) & 0xfff], writeMode: mode === WRITE_REJECT ? 'reject_with_503' : mode === WRITE_ALLOW ? 'allow' : '' };
}

function hash2Hex(tenant) {
  hash2(tenant);
  return hex8(H2[0]) + hex8(H2[1]);
}

module.exports = { FORMAT, readImage, findOverride, overrideCell, overrideRejectsWrites, overrideInfo, hash2Hex };
