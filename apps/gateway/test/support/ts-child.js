// Runs a TypeScript entry in a plain Node child process (so a test can kill -9 it): compiles .ts on
// require with SWC, as jest.preset.js does, and resolves the @gw/* paths of tsconfig.base.json.
// Either `node ts-child.js entry.ts args…` or preloaded: `node -r ts-child.js entry.ts` (fork's execArgv).
const path = require('node:path');
const { addHook } = require('pirates');
const swc = require('@swc/core');
const tsconfigPaths = require('tsconfig-paths');
const root = path.resolve(__dirname, '../../../..');
const { compilerOptions } = require(path.join(root, 'tsconfig.base.json'));
tsconfigPaths.register({ baseUrl: root, paths: compilerOptions.paths });
addHook(
  (code, filename) =>
    swc.transformSync(code, {
      filename,
      jsc: {
        parser: { syntax: 'typescript', decorators: true },
        transform: { legacyDecorator: true, decoratorMetadata: true },
        target: 'es2022',
        keepClassNames: true,
      },
      module: { type: 'commonjs' },
    }).code,
  { exts: ['.ts'] },
);
if (require.main === module) require(path.resolve(process.argv[2]));
