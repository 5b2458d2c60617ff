#!/usr/bin/env node
// The npm registry reachable from our machines serves only the linux-x64 builds of packages that ship
// one optional package per platform (@swc/core-*, sass-embedded-*, @unrs/resolver-binding-*). An
// `npm install` here therefore writes a lockfile without the other platforms' entries, and `npm ci`
// then refuses it as out of sync. This adds those entries back, marked optional and with the os/cpu/libc
// their names say, so `npm ci` accepts the lockfile and skips them on this platform, while a machine of
// that platform resolves them by name and version. Run it after every `npm install`.
const fs = require('node:fs');
const path = require('node:path');

const lockPath = path.join(__dirname, '..', '..', 'package-lock.json');
const lock = JSON.parse(fs.readFileSync(lockPath, 'utf8'));
const packages = lock.packages;

const OS = ['darwin', 'win32', 'android', 'freebsd', 'openharmony', 'linux', 'sunos', 'aix', 'netbsd', 'openbsd'];
const CPU = { arm64: 'arm64', aarch64: 'arm64', x64: 'x64', ia32: 'ia32', arm: 'arm', ppc64: 'ppc64', s390x: 's390x', riscv64: 'riscv64', loong64: 'loong64' };

function platformOf(name) {
  const base = name.split('/').pop();
  if (base.endsWith('-all-unknown')) return { cpu: ['!arm', '!arm64', '!riscv64', '!x64'] };
  if (base.endsWith('-unknown-all')) return { os: ['!android', '!darwin', '!linux', '!win32'] };
  const tokens = base.split('-');
  const os = tokens.find((token) => OS.includes(token));
  const cpu = tokens.map((token) => CPU[token]).find(Boolean);
  const libc = tokens.some((token) => token.startsWith('musl'))
    ? 'musl'
    : os === 'linux' && tokens.some((token) => token.startsWith('gnu'))
      ? 'glibc'
      : undefined;
  if (!os || !cpu) return null;
  return { os: [os], cpu: [cpu], ...(libc ? { libc: [libc] } : {}) };
}

let added = 0;
for (const [location, entry] of Object.entries(packages)) {
  for (const [dependency, spec] of Object.entries(entry.optionalDependencies ?? {})) {
    const parentDir = location ? `${location}/node_modules/${dependency}` : `node_modules/${dependency}`;
    const hoisted = `node_modules/${dependency}`;
    if (packages[parentDir] || packages[hoisted]) continue;
    const platform = platformOf(dependency);
    if (!platform) continue;
    if (!/^\d+\.\d+\.\d+/.test(spec)) {
      process.stderr.write(`skipped ${dependency}@${spec}: not an exact version\n`);
      continue;
    }
    packages[hoisted] = { version: spec, optional: true, ...platform };
    added++;
  }
}
const sorted = Object.fromEntries(Object.entries(packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))));
lock.packages = sorted;
fs.writeFileSync(lockPath, `${JSON.stringify(lock, null, 2)}\n`);
process.stdout.write(`added ${added} platform entries to package-lock.json\n`);
