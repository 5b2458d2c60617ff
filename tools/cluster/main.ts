// Bundled and run by tools/cluster/run.js; the logic is libs/testing/src/cluster (shared with bench/cluster).
import { join } from 'node:path';
import { runClusterCli } from '../../libs/testing/src/cluster/cli';

runClusterCli(process.argv.slice(2), join(__dirname, '../../..')).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`[cluster] ${String((error as Error)?.stack ?? error)}\n`);
    process.exit(1);
  },
);
