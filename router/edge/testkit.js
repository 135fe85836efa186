'use strict';
// Shared fixtures for the edge handler tests: the golden files Go writes
// (testdata/routing) and CloudFront origin-request events.
const fs = require('node:fs');
const path = require('node:path');

const GOLDEN_DIR = path.join(__dirname, '..', '..', 'testdata', 'routing');

function readGolden(name) {
  return JSON.parse(fs.readFileSync(path.join(GOLDEN_DIR, name), 'utf8'));
}

// goldenPackage reads the golden function package testdata/routing/edge/<name>
// (config.json and routing.img, written by router/edge/golden_test.go) as
// the handler does at cold start: { cfg, image } with a fresh image buffer.
function goldenPackage(name) {
  return require('./routing').readPackage(path.join(GOLDEN_DIR, 'edge', name));
}

// goldenHandler is the handler of a golden package.
function goldenHandler(name) {
  const { cfg, image } = goldenPackage(name);
  return require('./routing').createHandler(cfg, image);
}

// goldenTable is the compiled table of a golden package.
function goldenTable(name) {
  const { cfg, image } = goldenPackage(name);
  return require('./routing').compile(cfg, image);
}

const ORIGIN_SECRET = 'not-a-real-secret-7f3a';

// event builds an origin-request event the way CloudFront delivers it:
// header map keys lowercased, the original name kept in "key", repeated
// headers in arrival order, and the origin's custom headers (the
// X-Origin-Verify secret) attached by CloudFront.
function event(method, headerPairs) {
  const headers = {};
  for (const [name, value] of headerPairs) {
    const k = name.toLowerCase();
    if (!Object.prototype.hasOwnProperty.call(headers, k)) headers[k] = [];
    headers[k].push({ key: name, value });
  }
  return {
    Records: [
      {
        cf: {
          config: {
            distributionDomainName: 'd111111abcdef8.cloudfront.net',
            distributionId: 'EDFDVBD6EXAMPLE',
            eventType: 'origin-request',
            requestId: '4TyzHTaYWb1GX1qTfsHhEqV6HUDd_BzoBZnwfnvQc_1oF26ClkoUSEQ==',
          },
          request: {
            clientIp: '203.0.113.178',
            method,
            uri: '/api/orders',
            querystring: 'page=2',
            headers,
            origin: {
              custom: {
                customHeaders: { 'x-origin-verify': [{ key: 'X-Origin-Verify', value: ORIGIN_SECRET }] },
                domainName: 'placeholder.invalid',
                keepaliveTimeout: 5,
                path: '',
                port: 443,
                protocol: 'https',
                readTimeout: 30,
                sslProtocols: ['TLSv1.2'],
              },
            },
          },
        },
      },
    ],
  };
}

module.exports = { GOLDEN_DIR, readGolden, goldenPackage, goldenHandler, goldenTable, event, ORIGIN_SECRET };
