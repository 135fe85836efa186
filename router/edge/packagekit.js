'use strict';
// Function packages for the edge's benchmarks (bench.js, bench_lanes.js,
// measure.js), built by `cellctl router package` — the command that writes
// the package exactly as the router stack ships it — so what is measured
// is what ships and cannot drift from it. Not part of the package.
//
// Each package comes from a copy of the repository's demo fleet (Pulumi.yaml
// and stacks/) whose router has the largest memory Lambda allows, so the
// fit check (the limits these measurements set) never refuses a table
// being measured, and a routing table of the fleet's cells and buckets
// with n overrides. CELLCTL names a cellctl binary; otherwise one is built
// from this checkout.
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const REPO = path.join(__dirname, '..', '..');

let binary = process.env.CELLCTL || '';

function cellctl() {
  if (binary === '') {
    binary = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'edge-cellctl-')), 'cellctl');
    execFileSync('go', ['build', '-o', binary, './cmd/cellctl'], { cwd: REPO, stdio: 'inherit' });
  }
  return binary;
}

// fleetCopy is a temporary copy of the demo fleet with lanes as given
// ({lanes, shard}; null: the fleet's own) and, for lanes without a
// router at all, nothing else changed.
function fleetCopy(lanes) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'edge-fleet-'));
  fs.copyFileSync(path.join(REPO, 'Pulumi.yaml'), path.join(dir, 'Pulumi.yaml'));
  fs.mkdirSync(path.join(dir, 'stacks'));
  for (const f of fs.readdirSync(path.join(REPO, 'stacks'))) {
    if (!/\.(ya?ml|json)$/.test(f)) continue;
    let text = fs.readFileSync(path.join(REPO, 'stacks', f), 'utf8');
    if (f === 'Pulumi.router.yaml') text = text.replace(/^config:\n/m, 'config:\n  cells:edgeMemoryMb: 10240\n');
    if (lanes && /^Pulumi\.cell-.*\.yaml$/.test(f)) {
      text = text.replace(/^\s+cells:lanes:.*\n|^\s+cells:laneShardSize:.*\n/gm, '');
      text = text.replace(/^config:\n/m, `config:\n  cells:lanes: ${lanes.lanes}\n  cells:laneShardSize: ${lanes.shard}\n`);
    }
    fs.writeFileSync(path.join(dir, 'stacks', f), text);
  }
  return dir;
}

// uuids are n distinct 36-byte UUID-style tenant ids that look random (and
// compress like real ones).
function uuid(i) {
  let x = (0x9e3779b9 ^ Math.imul(i + 1, 0x85ebca6b)) >>> 0;
  let s = '';
  while (s.length < 20) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    s += (x >>> 0).toString(16).padStart(8, '0');
  }
  const u = s.slice(0, 20) + i.toString(16).padStart(12, '0');
  return `${u.slice(0, 8)}-${u.slice(8, 12)}-${u.slice(12, 16)}-${u.slice(16, 20)}-${u.slice(20)}`;
}

// writeTable writes the demo fleet's routing table with overrides of the
// given tenants (a tenth migrating with writes rejected) to file.
function writeTable(file, tenants) {
  const demo = JSON.parse(fs.readFileSync(path.join(REPO, 'stacks', 'routing.json'), 'utf8'));
  const cells = Object.keys(demo.cells).sort();
  const lines = tenants.map((t, i) => {
    const cell = cells[i % cells.length];
    return i % 10 === 0
      ? `    {"tenant": ${JSON.stringify(t)}, "cell": "${cell}", "state": "migrating", "target": "${cells[(i + 1) % cells.length]}", "write_mode": "reject_with_503"}`
      : `    {"tenant": ${JSON.stringify(t)}, "cell": "${cell}", "state": "active"}`;
  });
  const cellLines = cells.map((c) => `    ${JSON.stringify(c)}: ${JSON.stringify(demo.cells[c])}`);
  fs.writeFileSync(
    file,
    `{\n  "version": 7,\n  "buckets": ${demo.buckets},\n  "cells": {\n${cellLines.join(',\n')}\n  },\n  "overrides": [\n${lines.join(',\n')}\n  ]\n}\n`,
  );
}

// buildPackage writes the package of a table whose overrides pin tenants
// (default: n UUID-style ids) and returns its directory and cellctl's
// report ({imageBytes, packageBytes, neededMemoryMb, …}).
function buildPackage(n, opts = {}) {
  const tenantOf = opts.tenant || uuid;
  const fleet = fleetCopy(opts.lanes || null);
  const table = path.join(fleet, 'table.json');
  const tenants = new Array(n);
  for (let i = 0; i < n; i++) tenants[i] = tenantOf(i);
  writeTable(table, tenants);
  const dir = path.join(fleet, 'package');
  const out = execFileSync(cellctl(), ['--dir', fleet, 'router', 'package', dir, '--table', table, '-o', 'json'], {
    maxBuffer: 1 << 26,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return { dir, fleet, report: JSON.parse(out) };
}

function cleanup(pkg) {
  fs.rmSync(pkg.fleet, { recursive: true, force: true });
}

module.exports = { buildPackage, cleanup, uuid, REPO };
