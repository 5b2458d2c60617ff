#!/usr/bin/env node
// `npm run bench -- <name> [args…]`: bundles bench/<name>/main.ts with the apps' webpack setup, then
// runs it in a fresh Node process. Each benchmark prints one JSON object on stdout.
const { spawnSync } = require('node:child_process');
const { existsSync, readdirSync } = require('node:fs');
const path = require('node:path');
const webpack = require('webpack');
const { makeAppConfig } = require('../tools/webpack/app.config');

const [name, ...args] = process.argv.slice(2);
// `all`: every bench (--quick: a short preset each) compared with docs/bench/baseline.json (bench/all.js).
if (name === 'all') require('./all.js');
const isBench = (entry) => existsSync(path.join(__dirname, entry, 'main.ts')) || existsSync(path.join(__dirname, entry, 'run.js'));
const available = readdirSync(__dirname).filter(isBench);
if (name !== 'all' && (!name || !available.includes(name))) {
  process.stderr.write(`usage: npm run bench -- <${available.join('|')}|all> [args]\n`);
  process.exit(2);
}

// A plain-JS bench (bench/<name>/run.js) runs against the built simulator library.
if (!existsSync(path.join(__dirname, name, 'main.ts'))) {
  const build = spawnSync('npx', ['nx', 'run', 'wa-sim:build'], { stdio: ['ignore', 'ignore', 'inherit'] });
  if (build.status !== 0) process.exit(build.status ?? 1);
  const result = spawnSync(process.execPath, [path.join(__dirname, name, 'run.js'), ...args], { stdio: 'inherit' });
  process.exit(result.status ?? 1);
}

const config = makeAppConfig({ name, root: path.join(__dirname, name), entry: 'main.ts', outDir: `dist/bench/${name}`, filename: 'main.js' });
config.module.rules[0].options.configFile = path.join(__dirname, 'tsconfig.json');
webpack(config, (error, stats) => {
  if (error || stats.hasErrors()) {
    process.stderr.write(`${error ?? stats.toString('errors-only')}\n`);
    process.exit(1);
  }
  const result = spawnSync(process.execPath, ['--expose-gc', path.join(__dirname, '..', 'dist', 'bench', name, 'main.js'), ...args], { stdio: 'inherit' });
  process.exit(result.status ?? 1);
});
