/**
 * `npm run cluster [-- --stop | --status] [--dir .cluster] [--base-port 24000] [--dist dist]`: the whole
 * deployment on loopback (see config.ts), or stopping exactly what the state file says was started.
 */
import { resolve } from 'node:path';
import { Cluster, formatTable, readState, stopFromState } from './cluster';

export async function runClusterCli(argv: string[], repoRoot: string): Promise<number> {
  const flags = new Set(argv.filter((arg) => arg === '--stop' || arg === '--status'));
  const value = (name: string, fallback: string) => {
    const at = argv.indexOf(`--${name}`);
    return at >= 0 && argv[at + 1] !== undefined ? argv[at + 1] : fallback;
  };
  const runDir = resolve(repoRoot, value('dir', '.cluster'));
  const say = (line: string) => process.stderr.write(`[cluster] ${line}\n`);
  if (flags.has('--stop')) {
    const state = readState(runDir);
    if (!state) {
      say(`nothing to stop: no ${runDir}/state.json`);
      return 0;
    }
    await stopFromState(state, say);
    say('stopped');
    return 0;
  }
  if (flags.has('--status')) {
    const state = readState(runDir);
    process.stdout.write(state ? `${formatTable(state)}\n` : `no cluster in ${runDir}\n`);
    return 0;
  }
  const cluster = await Cluster.start({
    runDir,
    repoRoot,
    basePort: Number(value('base-port', '24000')),
    distDir: resolve(repoRoot, value('dist', 'dist')),
  });
  process.stdout.write(`${cluster.table()}\n\nStop it with: npm run cluster -- --stop\n`);
  return 0;
}
