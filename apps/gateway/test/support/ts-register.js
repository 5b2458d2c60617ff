// Loads TypeScript in a child process the way Jest does (SWC, legacy decorators, the @gw/* paths):
// `node -r ./ts-register.js child.ts`. For tests that must kill a real process (kill -9).
const fs = require('node:fs');
const path = require('node:path');
const Module = require('node:module');
const { transformSync } = require('@swc/core');

const root = path.join(__dirname, '..', '..', '..', '..');
const { compilerOptions } = require(path.join(root, 'tsconfig.base.json'));
const aliases = new Map(Object.entries(compilerOptions.paths).map(([alias, [target]]) => [alias, path.join(root, target)]));

const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  return resolve.call(this, aliases.get(request) ?? request, ...rest);
};

require.extensions['.ts'] = (module, filename) => {
  const { code } = transformSync(fs.readFileSync(filename, 'utf8'), {
    filename,
    jsc: {
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true },
      target: 'es2022',
      keepClassNames: true,
    },
    module: { type: 'commonjs' },
  });
  module._compile(code, filename);
};
