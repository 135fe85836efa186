'use strict';
// The configs of testdata/routing/edge-config-bad are refused by compile()
// — what the handler runs when the function starts — with the message in
// each <name>.want. router/edge/check_test.go holds the Go CheckConfig,
// which the router stack runs before packaging, to the same files and
// messages: a config the edge would refuse never gets packaged.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { compile } = require('./routing');
const { GOLDEN_DIR } = require('./testkit');

const dir = path.join(GOLDEN_DIR, 'edge-config-bad');
const cases = fs.readdirSync(dir).filter((f) => f.endsWith('.json'));

test('there are bad configs to refuse', () => {
  assert.ok(cases.length >= 8, `only ${cases.length} bad configs`);
});

for (const file of cases) {
  test(`compile refuses ${file}`, () => {
    const cfg = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'));
    const want = fs.readFileSync(path.join(dir, file.replace(/\.json$/, '.want')), 'utf8').split('\n')[0];
    assert.throws(() => compile(cfg), (err) => {
      assert.equal(err.message, 'edge routing config: ' + want);
      return true;
    });
  });
}
