#!/usr/bin/env node
// `npm run api:coverage`: bundles apps/gateway/src/openapi/api-coverage.main.ts with the apps' webpack
// setup, then runs it. It prints how many of the uazapiGO reference's operations the gateway serves and
// lists the others; the document comes from the gateway's module graph alone (no Postgres, no NATS).
const { spawnSync } = require('node:child_process');
const path = require('node:path');
const webpack = require('webpack');
const { makeAppConfig } = require('../webpack/app.config');

const workspaceRoot = path.join(__dirname, '../..');
const gatewayRoot = path.join(workspaceRoot, 'apps/gateway');
const config = makeAppConfig({
  name: 'api-coverage',
  root: gatewayRoot,
  entry: 'src/openapi/api-coverage.main.ts',
  outDir: 'dist/tools/api-coverage',
  filename: 'main.js',
});
webpack(config, (error, stats) => {
  if (error || stats.hasErrors()) {
    process.stderr.write(`${error ?? stats.toString('errors-only')}\n`);
    process.exit(1);
  }
  const result = spawnSync(process.execPath, [path.join(workspaceRoot, 'dist/tools/api-coverage/main.js'), workspaceRoot], { stdio: 'inherit' });
  process.exit(result.status ?? 1);
});
