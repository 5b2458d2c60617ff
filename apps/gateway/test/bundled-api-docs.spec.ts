import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';

/**
 * The API docs' routes bundled as bench/run.js bundles every bench (tools/webpack with bench/tsconfig.json,
 * whose `module: preserve` leaves ES imports to webpack): webpack rewrote an imported
 * `createRequire(__filename)` to `undefined(…)`, and every bench that starts the gateway threw in
 * createHttpApp while the tests passed. Bundles openapi.routes.ts alone so, then serves an asset of
 * /docs from the bundle in a plain Node process.
 */
describe('the API docs routes, bundled as the benches bundle them', () => {
  const root = path.join(__dirname, '../../..');
  const outDir = 'dist/test/bundled-api-docs';

  it('should serve /docs assets from the bundle', async () => {
    const load = createRequire(__filename);
    const webpack = load('webpack') as (
      config: unknown,
      done: (error: Error | null, stats: { hasErrors(): boolean; toString(preset: string): string }) => void,
    ) => void;
    const { makeAppConfig } = load(path.join(root, 'tools/webpack/app.config.js')) as {
      makeAppConfig(options: Record<string, string>): Record<string, unknown>;
    };
    const config = makeAppConfig({
      name: 'bundled-api-docs',
      root: path.join(root, 'apps/gateway'),
      entry: 'src/openapi/openapi.routes.ts',
      outDir,
      filename: 'main.js',
    }) as {
      module: { rules: Array<{ options: { configFile: string } }> };
    };
    config.module.rules[0].options.configFile = path.join(root, 'bench/tsconfig.json');
    await new Promise<void>((resolve, reject) =>
      webpack(config, (error, stats) => (error || stats.hasErrors() ? reject(error ?? new Error(stats.toString('errors-only'))) : resolve())),
    );
    const script = `
      const fastify = require('fastify')();
      require(${JSON.stringify(path.join(root, outDir, 'main.js'))}).serveApiDocs({ getHttpAdapter: () => ({ getInstance: () => fastify }) });
      fastify.inject('/docs/swagger-ui.css').then((answer) => process.stdout.write(String(answer.statusCode)));`;
    const run = spawnSync(process.execPath, ['-e', script], { cwd: root, encoding: 'utf8', timeout: 60_000 });
    expect({ status: run.stdout, error: run.stderr.split('\n').find((line) => /Error/.test(line)) }).toEqual({ status: '200', error: undefined });
  }, 120_000);
});
