// One webpack setup for every deployable: TypeScript through ts-loader (decorator metadata intact),
// workspace libs (@gw/*) bundled in, everything from node_modules left as a runtime require.
const path = require('path');
const { execFileSync } = require('child_process');
const { DefinePlugin } = require('webpack');
const { compilerOptions } = require('../../tsconfig.base.json');
const { version } = require('../../package.json');

const workspaceRoot = path.join(__dirname, '../..');
const alias = {};
for (const [name, [target]] of Object.entries(compilerOptions.paths)) {
  alias[name] = path.join(workspaceRoot, target);
}

// The commit GET /version and /health report: GIT_COMMIT (a Docker build has no .git), else the tree's HEAD.
function gitCommit() {
  if (process.env.GIT_COMMIT) return process.env.GIT_COMMIT;
  try {
    return execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], { cwd: workspaceRoot, stdio: ['ignore', 'pipe', 'ignore'] })
      .toString()
      .trim();
  } catch {
    return 'unknown';
  }
}

function makeAppConfig({ name, root, entry = 'src/main.ts', outDir = `dist/apps/${name}`, filename = 'main.js' }) {
  return {
    mode: 'none',
    target: 'node',
    context: root,
    entry: path.join(root, entry),
    devtool: 'source-map',
    // strictModuleExceptionHandling: a module whose loading threw is not kept half-made in the module cache, so a
    // package loaded on first use (ADR 0056) that failed once (EMFILE under load) loads again on the next try.
    output: { path: path.join(workspaceRoot, outDir), filename, libraryTarget: 'commonjs2', clean: false, strictModuleExceptionHandling: true },
    resolve: { extensions: ['.ts', '.js', '.json'], alias },
    externalsPresets: { node: true },
    externals: [
      ({ request }, callback) => {
        if (request.startsWith('.') || path.isAbsolute(request) || request.startsWith('@gw/')) return callback();
        return callback(null, `commonjs ${request}`);
      },
    ],
    module: {
      rules: [
        {
          test: /\.ts$/,
          loader: 'ts-loader',
          options: { transpileOnly: true, configFile: path.join(root, 'tsconfig.json') },
          exclude: /node_modules/,
        },
      ],
    },
    plugins: [new DefinePlugin({ __PACKAGE_VERSION__: JSON.stringify(version), __GIT_COMMIT__: JSON.stringify(gitCommit()) })],
    optimization: { minimize: false, nodeEnv: false },
    node: { __dirname: false, __filename: false },
    stats: 'errors-warnings',
  };
}

module.exports = { makeAppConfig };
