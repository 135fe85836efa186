'use strict';
// What the handler refuses at cold start, with the messages Go's checks
// give (router/edge/check_test.go writes these files and holds CheckConfig
// and ReadImage to them): the configs of testdata/routing/edge-config-bad
// next to the golden image, and the images of testdata/routing/image-bad.
// A package the edge would refuse never gets packaged.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { compile } = require('./routing');
const { readImage } = require('./image');
const { GOLDEN_DIR, goldenPackage } = require('./testkit');

const configDir = path.join(GOLDEN_DIR, 'edge-config-bad');
const imageDir = path.join(GOLDEN_DIR, 'image-bad');
const configs = fs.readdirSync(configDir).filter((f) => f.endsWith('.json'));
const images = fs.readdirSync(imageDir).filter((f) => f.endsWith('.img'));

function want(dir, file) {
  return fs.readFileSync(path.join(dir, file.replace(/\.(json|img)$/, '.want')), 'utf8').split('\n')[0];
}

test('there are bad configs and images to refuse', () => {
  assert.ok(configs.length >= 20, `only ${configs.length} bad configs`);
  assert.ok(images.length >= 20, `only ${images.length} bad images`);
});

for (const file of configs) {
  test(`compile refuses ${file}`, () => {
    const cfg = JSON.parse(fs.readFileSync(path.join(configDir, file), 'utf8'));
    assert.throws(() => compile(cfg, goldenPackage('full').image), (err) => {
      assert.equal(err.message, want(configDir, file));
      return true;
    });
  });
}

for (const file of images) {
  test(`readImage refuses ${file}`, () => {
    const bytes = new Uint8Array(fs.readFileSync(path.join(imageDir, file)));
    assert.throws(() => readImage(bytes), (err) => {
      assert.equal(err.message, want(imageDir, file));
      return true;
    });
  });
}
