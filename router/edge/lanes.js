'use strict';
// Shuffle-sharding lanes at the edge: the same assignment as the Go
// package router (lanes.go), which is the source of truth; lanes.test.js
// checks this file against the vectors Go writes to testdata/routing.
//
//   h     = mix64(FNV-1a-64(tenant))      (the splitmix64 finalizer)
//   rank  = h mod C(M, r)
//   lanes = the r-combination of that rank in the combinatorial number
//           system (colex), ascending; sent as X-Cell-Lanes: "3,17".
//
// No BigInt: 64-bit words are two uint32 halves, multiplied in 16-bit
// limbs; C(M, r) is at most 2^53-1 (Go's router.MaxShards, enforced when
// the config is compiled), so every binomial and rank is an exact double.

const MAX_LANES = 256;
const MAX_SHARDS = 9007199254740991; // 2^53-1
const SATURATED = 9007199254740992; // 2^53: "more than MAX_SHARDS"
const TWO_32 = 4294967296;
// Layouts with at most this many shards keep every header value ready.
const VALUE_TABLE_MAX = 8192;
// Lane numbers as strings, so a header costs concatenations only
// (number-to-string conversion is the slowest step otherwise).
const LANE_NAMES = Array.from({ length: MAX_LANES }, (_, i) => String(i));

// mul64 and mix64 leave their result here: [hi, lo]. A typed array, not
// two module variables: a uint32 above 2^31 stored in a variable is a
// heap number, one allocation per write.
const W = new Uint32Array(2);

// mul64 sets W to (ah:al * bh:bl) mod 2^64, in 16-bit limbs
// so that every partial product and carry stays an exact uint32 (the
// schoolbook multiply of Long.js).
function mul64(ah, al, bh, bl) {
  const a48 = ah >>> 16;
  const a32 = ah & 0xffff;
  const a16 = al >>> 16;
  const a00 = al & 0xffff;
  const b48 = bh >>> 16;
  const b32 = bh & 0xffff;
  const b16 = bl >>> 16;
  const b00 = bl & 0xffff;
  let c00 = a00 * b00;
  let c16 = c00 >>> 16;
  c00 &= 0xffff;
  c16 += a16 * b00;
  let c32 = c16 >>> 16;
  c16 &= 0xffff;
  c16 += a00 * b16;
  c32 += c16 >>> 16;
  c16 &= 0xffff;
  c32 += a32 * b00;
  let c48 = c32 >>> 16;
  c32 &= 0xffff;
  c32 += a16 * b16;
  c48 += c32 >>> 16;
  c32 &= 0xffff;
  c32 += a00 * b32;
  c48 += c32 >>> 16;
  c32 &= 0xffff;
  c48 = (c48 + a48 * b00 + a32 * b16 + a16 * b32 + a00 * b48) & 0xffff;
  W[0] = (c48 << 16) | c32;
  W[1] = (c16 << 16) | c00;
}

// mix64 is the splitmix64 finalizer of the 64-bit word hi:lo.
function mix64(hi, lo) {
  // x += 0x9e3779b97f4a7c15
  let l = lo + 0x7f4a7c15;
  let h = (hi + 0x9e3779b9 + (l >= TWO_32 ? 1 : 0)) >>> 0;
  l = l >>> 0;
  // x = (x ^ (x >>> 30)) * 0xbf58476d1ce4e5b9
  l = (l ^ ((l >>> 30) | (h << 2))) >>> 0;
  h = (h ^ (h >>> 30)) >>> 0;
  mul64(h, l, 0xbf58476d, 0x1ce4e5b9);
  h = W[0];
  l = W[1];
  // x = (x ^ (x >>> 27)) * 0x94d049bb133111eb
  l = (l ^ ((l >>> 27) | (h << 5))) >>> 0;
  h = (h ^ (h >>> 27)) >>> 0;
  mul64(h, l, 0x94d049bb, 0x133111eb);
  h = W[0];
  l = W[1];
  // x ^= x >>> 31
  W[1] = l ^ ((l >>> 31) | (h << 1));
  W[0] = h ^ (h >>> 31);
}

// modq is v mod n for integers 0 ≤ v < 2^53, v + n ≤ 2^53: a floating
// division, exact products and one correction step. Much faster than the
// % operator on doubles, which runs libm's fmod bit by bit.
function modq(v, n) {
  const r = v - Math.floor(v / n) * n;
  return r < 0 ? r + n : r >= n ? r - n : r;
}

// mod64 is (hi·2^32 + lo) mod n for 1 ≤ n ≤ 2^53-1, exact in doubles:
// lo is shifted in `step` bits at a time, so x·2^step + chunk stays below
// 2^52 and every modq is exact (layout() computes step; 16 for n < 2^36).
function mod64(hi, lo, n, step) {
  if (step > 0) {
    let x = modq(hi, n);
    for (let rem = 32; rem > 0; ) {
      const s = rem < step ? rem : step;
      rem -= s;
      x = modq(x * (1 << s) + ((lo >>> rem) & ((1 << s) - 1)), n);
    }
    return x;
  }
  // n ≥ 2^51: one bit at a time; x·2 < 2^54 is even, hence exact.
  let x = hi % n;
  for (let i = 0; i < 32; i++) {
    x *= 2;
    if (x >= n) x -= n;
  }
  const y = n - (lo % n); // x + lo mod n without a sum above 2^53
  return x >= y ? x - y : x + (lo % n);
}

// modStep is the chunk width mod64 may use for n: 52 - bits(n), at most 16.
function modStep(n) {
  let bits = 0;
  for (let v = n; v >= 1; v /= 2) bits++;
  return Math.max(0, Math.min(16, 52 - bits));
}

// layout builds the lane layout of a cell with m lanes and shards of r,
// or returns an error message.
function layout(m, r) {
  if (!Number.isInteger(m) || m < 1 || m > MAX_LANES) return `lanes must be an integer from 1 to ${MAX_LANES}`;
  if (!Number.isInteger(r) || r < 1 || r > m) return 'the shard size must be an integer from 1 to the number of lanes';
  const w = m + 1;
  // binom[k*w + n] = C(n, k), saturated at 2^53.
  const binom = new Float64Array((r + 1) * w);
  for (let n = 0; n <= m; n++) binom[n] = 1;
  for (let k = 1; k <= r; k++) {
    for (let n = k; n <= m; n++) {
      const v = binom[(k - 1) * w + n - 1] + binom[k * w + n - 1];
      binom[k * w + n] = v > SATURATED ? SATURATED : v;
    }
  }
  const shards = binom[r * w + m];
  if (shards > MAX_SHARDS) return `C(${m}, ${r}) shards exceed 2^53-1`;
  const l = { m, r, shards, step: modStep(shards), binom, scratch: new Int32Array(r), values: null };
  if (shards <= VALUE_TABLE_MAX) {
    // Few shards (M = 8, r = 2: 28; M = 64, r = 2: 2016): every header value
    // made once at cold start, so a request costs the hash and one load.
    const values = new Array(shards);
    for (let n = 0; n < shards; n++) values[n] = join(unrank(l, n));
    l.values = values;
  }
  return l;
}

// compileLanes checks cfg.lanes ({cell: [M, r]}) and returns, per cell
// index, its layout or null (a cell without lanes gets no X-Cell-Lanes).
function compileLanes(lanes, index, cellCount, fail) {
  const out = new Array(cellCount).fill(null);
  if (lanes === undefined) return out;
  if (!lanes || typeof lanes !== 'object' || Array.isArray(lanes)) fail('lanes must be an object of cell → [lanes, shard size]');
  for (const [cell, v] of Object.entries(lanes)) {
    if (!index.has(cell)) fail(`lanes names unknown cell ${JSON.stringify(cell)}`);
    if (!Array.isArray(v) || v.length !== 2) fail(`lanes of ${cell} must be [lanes, shard size]`);
    const l = layout(v[0], v[1]);
    if (typeof l === 'string') fail(`lanes of ${cell}: ${l}`);
    out[index.get(cell)] = l;
  }
  return out;
}

// unrank fills l.scratch with the lanes of the shard of rank, ascending.
function unrank(l, rank) {
  const w = l.m + 1;
  const binom = l.binom;
  let hi = l.m;
  for (let k = l.r; k >= 1; k--) {
    // The largest c in [k-1, hi) with C(c, k) ≤ rank.
    let base = k - 1;
    let n = hi - base;
    const col = k * w;
    while (n > 1) {
      const half = n >>> 1;
      if (binom[col + base + half] <= rank) base += half;
      n -= half;
    }
    rank -= binom[col + base];
    l.scratch[k - 1] = base;
    hi = base;
  }
  return l.scratch;
}

// rankOf is the shard rank of the tenant whose FNV-1a-64 hash is hi:lo.
function rankOf(l, hi, lo) {
  mix64(hi, lo);
  return mod64(W[0], W[1], l.shards, l.step);
}

function join(s) {
  if (s.length <= 4) {
    let out = LANE_NAMES[s[0]];
    for (let i = 1; i < s.length; i++) out += ',' + LANE_NAMES[s[i]];
    return out;
  }
  // Longer shards: one flat string instead of a chain of concatenations.
  const parts = new Array(s.length);
  for (let i = 0; i < s.length; i++) parts[i] = LANE_NAMES[s[i]];
  return parts.join(',');
}

// lanesValue is the X-Cell-Lanes value ("3,17") for the FNV hash hi:lo.
function lanesValue(l, hi, lo) {
  const rank = rankOf(l, hi, lo);
  return l.values !== null ? l.values[rank] : join(unrank(l, rank));
}

// mix64Hex is mix64 of a 16-hex-digit word, as 16 hex digits (for tests).
function mix64Hex(hex) {
  mix64(parseInt(hex.slice(0, 8), 16), parseInt(hex.slice(8), 16));
  return W[0].toString(16).padStart(8, '0') + W[1].toString(16).padStart(8, '0');
}

module.exports = { MAX_LANES, MAX_SHARDS, layout, compileLanes, unrank, rankOf, lanesValue, mix64Hex, mod64, modStep };
