/** `--repeat K` for any bench: the whole bench again in processes of its own, and the median of a figure over the runs. */
import { spawn } from 'node:child_process';

/** The middle value (the mean of the two middle ones for an even count, to 3 decimals); null for none. */
export function median(values: number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : Math.round(((sorted[middle - 1] + sorted[middle]) / 2) * 1000) / 1000;
}

/** This bench's command line without `--repeat K`: one ordinary run. */
function oneRunArgs(): string[] {
  const argv = process.argv.slice(2);
  const at = argv.indexOf('--repeat');
  if (at >= 0) argv.splice(at, 2);
  return [...process.execArgv, process.argv[1], ...argv];
}

/** One ordinary run of this bench in a process of its own (run `index` of `of`), and the JSON it printed last. */
export function runOnce<T>(index: number, of: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, oneRunArgs(), { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    child.once('error', reject);
    // 'close', not 'exit': the child's stdout is read to its end first.
    child.once('close', (code) => {
      const line = out.trim().split('\n').pop() ?? '';
      try {
        if (code !== 0) throw new Error(`exited with ${code}`);
        resolve(JSON.parse(line) as T);
      } catch (error) {
        reject(new Error(`run ${index + 1} of ${of}: ${(error as Error).message}`));
      }
    });
  });
}

/** The median, min and max of some figures (all null for none). */
export function spread(values: number[]): { median: number | null; min: number | null; max: number | null } {
  return { median: median(values), min: values.length ? Math.min(...values) : null, max: values.length ? Math.max(...values) : null };
}

/** The finite numbers among some figures (a run that printed none, or null, is left out). */
export function finite(values: Array<number | null | undefined>): number[] {
  return values.filter((value): value is number => typeof value === 'number' && Number.isFinite(value));
}

/** `times` ordinary runs of this bench, one after the other, each in a process of its own, and their JSON. */
export async function runTimes<T>(times: number, log: (line: string) => void): Promise<T[]> {
  const runs: T[] = [];
  for (let index = 0; index < times; index++) {
    log(`run ${index + 1} of ${times}`);
    runs.push(await runOnce<T>(index, times));
  }
  return runs;
}
