#!/usr/bin/env node
// `npm run cluster [-- --stop|--status] [--dir .cluster] [--base-port 24000] [--dist dist]` (issue #39):
// builds the services when their dist is missing (`--build` builds them again), bundles
// tools/cluster/main.ts with the apps' webpack setup, and runs it. No Docker: real processes on loopback.
const { spawnSync } = require('node:child_process');
const { existsSync } = require('node:fs');
const path = require('node:path');
const webpack = require('webpack');
const { makeAppConfig } = require('../webpack/app.config');

const root = path.join(__dirname, '../..');
const args = process.argv.slice(2);
const stopping = args.includes('--stop') || args.includes('--status');
const built = ['apps/gateway/main.js', 'apps/session-worker/main.js', 'apps/dispatcher/main.js', 'apps/webhook-relay/main.js', 'libs/wa-sim/server.js'];
const distArg = args.indexOf('--dist');
const dist = path.resolve(root, distArg >= 0 ? args[distArg + 1] : 'dist');
if (!stopping && (args.includes('--build') || built.some((file) => !existsSync(path.join(dist, file))))) {
  const projects = ['gateway', 'session-worker', 'dispatcher', 'webhook-relay', 'wa-sim'];
  const build = spawnSync('npx', ['nx', 'run-many', '-t', 'build', '-p', ...projects, '--outputStyle=static'], { cwd: root, stdio: ['ignore', 2, 'inherit'] });
  if (build.status !== 0) process.exit(build.status ?? 1);
}

const config = makeAppConfig({ name: 'cluster', root: __dirname, entry: 'main.ts', outDir: 'dist/tools/cluster', filename: 'main.js' });
config.module.rules[0].options.configFile = path.join(root, 'bench', 'tsconfig.json');
webpack(config, (error, stats) => {
  if (error || stats.hasErrors()) {
    process.stderr.write(`${error ?? stats.toString('errors-only')}\n`);
    process.exit(1);
  }
  const result = spawnSync(process.execPath, [path.join(root, 'dist', 'tools', 'cluster', 'main.js'), ...args.filter((arg) => arg !== '--build')], {
    stdio: 'inherit',
  });
  process.exit(result.status ?? 1);
});
