#!/usr/bin/env node
// `npm run api:types`: bundles apps/gateway/src/openapi/api-types.main.ts with the apps' webpack setup, then
// runs it: it writes apps/manager/src/lib/api-types.gen.ts, the console's API types generated from the
// gateway's OpenAPI document. `npm run api:types -- --check` writes nothing and fails when that file is stale.
const { spawnSync } = require('node:child_process');
const path = require('node:path');
const webpack = require('webpack');
const { makeAppConfig } = require('../webpack/app.config');

const workspaceRoot = path.join(__dirname, '../..');
const config = makeAppConfig({
  name: 'api-types',
  root: path.join(workspaceRoot, 'apps/gateway'),
  entry: 'src/openapi/api-types.main.ts',
  outDir: 'dist/tools/api-types',
  filename: 'main.js',
});
webpack(config, (error, stats) => {
  if (error || stats.hasErrors()) {
    process.stderr.write(`${error ?? stats.toString('errors-only')}\n`);
    process.exit(1);
  }
  const args = [path.join(workspaceRoot, 'dist/tools/api-types/main.js'), workspaceRoot, ...process.argv.slice(2)];
  const result = spawnSync(process.execPath, args, { stdio: 'inherit' });
  process.exit(result.status ?? 1);
});
