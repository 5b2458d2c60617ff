/** How a side's memory is measured: settled by full GCs, split into heap, ArrayBuffers and native; snapshots and connect profiles. */
import { readFileSync } from 'node:fs';
import { getHeapSpaceStatistics, writeHeapSnapshot } from 'node:v8';
import { loadBetween, loadMark, windowProfiler } from '../support/processes';
import { args, sleep } from './options';

/** KB per instance: the JS heap (used, and reserved but unused), ArrayBuffers (Buffers), and the rest of the anonymous RSS (malloc: native objects, TLS/zlib/crypto state, freed-but-kept arenas). */
export interface Breakdown {
  heapUsedKb: number;
  heapFreeKb: number;
  arrayBuffersKb: number;
  /** RssAnon − V8 heap − ArrayBuffers: native memory (malloc) and what the allocator keeps. */
  nativeKb: number;
  /** File-backed RSS (code pages of node and its libraries touched since the baseline). */
  fileKb: number;
  /** Per V8 heap space (old_space, new_space, large_object_space, …): committed and unused KB per instance, the change since the baseline. */
  spaces: Record<string, { committedKb: number; freeKb: number }>;
}

type Gc = (options?: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;
const gc = () => (global as unknown as { gc?: Gc }).gc?.();
const gcCompacting = () => (global as unknown as { gc?: Gc }).gc?.({ type: 'major', execution: 'sync', flavor: 'last-resort' });
export const mb = (bytes: number) => Math.round((bytes / 1024 / 1024) * 10) / 10;

export interface Memory {
  rss: number;
  heapUsed: number;
  heapTotal: number;
  arrayBuffers: number;
  rssAnon: number;
  rssFile: number;
  /** The process's peak RSS so far (VmHWM): a history storm's high-water mark, which the settled figure does not show. */
  peakRss: number;
  /** V8's heap spaces: committed (physical) bytes and the part of them no object uses. */
  spaces: Record<string, { committed: number; free: number }>;
}

function heapSpaces(): Memory['spaces'] {
  const spaces: Memory['spaces'] = {};
  for (const space of getHeapSpaceStatistics()) {
    spaces[space.space_name] = { committed: space.physical_space_size, free: space.physical_space_size - space.space_used_size };
  }
  return spaces;
}

/** RssAnon and RssFile of this process (Linux; zeros elsewhere). */
function procStatus(): { rssAnon: number; rssFile: number; peakRss: number } {
  try {
    const text = readFileSync('/proc/self/status', 'utf8');
    const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? 0) * 1024;
    return { rssAnon: kb('RssAnon'), rssFile: kb('RssFile') + kb('RssShmem'), peakRss: kb('VmHWM') };
  } catch {
    return { rssAnon: 0, rssFile: 0, peakRss: 0 };
  }
}

/** Memory at a settled point: full GCs with pauses between them, the same on both sides. */
export async function settledMemory(): Promise<Memory> {
  for (let i = 0; i < 3; i++) {
    gc();
    await sleep(300);
  }
  // A last-resort collection compacts the heap and gives its free pages back (V8's pooled pages too):
  // what V8 keeps committed after ordinary collections depends on when they ran (13–140 KB per
  // instance from run to run, and up to 130 MB of pooled pages), noise in a comparison of what each
  // side holds. Both sides are measured this way, before connecting and once settled.
  // One such collection evacuates only part of a fragmented old space (V8 bounds what one compaction
  // moves), so after a storm of short-lived objects (a history of 1,000,000 messages stored) the heap
  // kept 225 KB per instance committed and unused at N = 1,000. Repeated until the committed heap stops
  // shrinking (at most 10), the same on both sides.
  let committed = Infinity;
  for (let round = 0; round < 10; round++) {
    gcCompacting();
    await sleep(300);
    const now = process.memoryUsage().heapTotal;
    if (now >= committed * 0.995) break;
    committed = now;
    if (process.env.BENCH_GC_TRACE) process.stderr.write(`[memory] last-resort GC ${round + 1}: heap committed ${mb(now)} MB\n`);
  }
  const usage = process.memoryUsage();
  return { rss: usage.rss, heapUsed: usage.heapUsed, heapTotal: usage.heapTotal, arrayBuffers: usage.arrayBuffers, ...procStatus(), spaces: heapSpaces() };
}

export function breakdown(before: Memory, after: Memory, count: number): Breakdown {
  const kb = (bytes: number) => Math.round(bytes / 1024 / Math.max(1, count));
  const native = (m: Memory) => m.rssAnon - m.heapTotal - m.arrayBuffers;
  return {
    heapUsedKb: kb(after.heapUsed - before.heapUsed),
    heapFreeKb: kb(after.heapTotal - after.heapUsed - (before.heapTotal - before.heapUsed)),
    arrayBuffersKb: kb(after.arrayBuffers - before.arrayBuffers),
    nativeKb: kb(native(after) - native(before)),
    fileKb: kb(after.rssFile - before.rssFile),
    spaces: Object.fromEntries(
      Object.entries(after.spaces).map(([name, space]) => [
        name,
        { committedKb: kb(space.committed - (before.spaces[name]?.committed ?? 0)), freeKb: kb(space.free - (before.spaces[name]?.free ?? 0)) },
      ]),
    ),
  };
}

/**
 * With `--snapshot <path>`, heap snapshots of each side before connecting and once settled
 * (`<path>.<side>[.base].heapsnapshot`). Writing one costs native memory: RSS figures of such a run are off.
 */
export function snapshot(side: string): void {
  const path = args.get('snapshot');
  if (path) writeHeapSnapshot(`${path}.${side}.heapsnapshot`);
}

/** With `--cpu-profile <path>`, a CPU profile of each side's connect window (`<path>.<side>.cpuprofile`, open in Chrome DevTools). */
export async function connectWindow(): Promise<{ stop(side: string, connected: number): Promise<number> }> {
  const profiler = args.get('cpu-profile') ? windowProfiler() : undefined;
  await profiler?.start();
  const from = loadMark();
  return {
    async stop(side, connected) {
      const { cpuMs } = loadBetween(from, loadMark());
      await profiler?.stop(`${args.get('cpu-profile')}.${side}.cpuprofile`);
      return Math.round((cpuMs / Math.max(1, connected)) * 10) / 10;
    },
  };
}
