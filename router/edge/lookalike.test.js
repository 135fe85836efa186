'use strict';
// The edge applies Go's look-alike rule (router/validate.go lookalike): two
// override tenants equal in NFC but not as strings make the table invalid.
// The pairs are the ones Go refuses in testdata/routing/bad/lookalike_tenants.json.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { compile } = require('./routing');
const { GOLDEN_DIR, readGolden } = require('./testkit');

const base = readGolden('golden_config.json');
const table = JSON.parse(fs.readFileSync(path.join(GOLDEN_DIR, 'bad', 'lookalike_tenants.json'), 'utf8'));
const tenants = table.overrides.map((o) => o.tenant);

function withOverrides(list) {
  const cfg = structuredClone(base);
  cfg.overrides = {};
  for (const t of list) cfg.overrides[t] = { cell: base.cells[0] };
  return cfg;
}

test('canonically equivalent override tenants are refused, in either order', () => {
  for (const [a, b] of [[0, 1], [2, 3], [4, 5]]) {
    for (const pair of [[tenants[a], tenants[b]], [tenants[b], tenants[a]]]) {
      assert.throws(() => compile(withOverrides(pair)), /same text in different Unicode normalization forms/, JSON.stringify(pair));
    }
  }
});

test('distinct tenants, and one form alone, compile', () => {
  assert.doesNotThrow(() => compile(withOverrides([tenants[0], tenants[2], tenants[4], tenants[6], 'acme'])));
  assert.doesNotThrow(() => compile(withOverrides([tenants[1], tenants[3], tenants[5]])));
});
