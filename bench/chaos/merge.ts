/**
 * `--merge a.json,b.json,…`: the JSON objects of runs in parts (each `--modes` a share of the table,
 * `--sequential 0` / `--all-at-once 0` / `--storm-instances 0` leaving phases out) put together: every
 * mode of CHAOS_MODES measured on its own, an all-at-once phase of every mode, and the storm, each
 * `met`. Files are given oldest first: a phase measured again in a later part (after a fix) counts
 * with its latest measure, the earlier ones listed as `superseded`. Prints one JSON object with `met`
 * and what is `missing` for a complete run.
 */
import { MODE_GOAL_S, STORM_GOAL_S } from './options';

export async function mergeParts(files: string[]): Promise<void> {
  const { readFileSync } = await import('node:fs');
  const { CHAOS_MODES } = await import('@gw/testing');
  type Part = {
    results: Record<string, { met?: boolean; skipped?: unknown }>;
    storm: { met: boolean } | null;
    modes: Record<string, unknown>;
    instances: number;
    stormInstances: number;
  };
  const parts = files.map((file) => {
    const lines = readFileSync(file, 'utf8').trim().split('\n');
    return { file, part: JSON.parse(lines[lines.length - 1]) as Part };
  });
  const phases: Record<string, Array<{ file: string; met: boolean; skipped?: unknown }>> = {};
  const storms: Array<{ file: string; instances: number; met: boolean }> = [];
  for (const { file, part } of parts) {
    for (const [name, result] of Object.entries(part.results)) {
      // An all-at-once phase of a share of the modes is not the table's all-at-once.
      const key = name === 'all-at-once' && Object.keys(part.modes).length < CHAOS_MODES.length ? `all-at-once(${Object.keys(part.modes).join(',')})` : name;
      (phases[key] ??= []).push({
        file,
        met: result.met === true,
        ...(result.skipped !== undefined && result.met === undefined ? { skipped: result.skipped } : {}),
      });
    }
    if (part.storm) storms.push({ file, instances: part.stormInstances, met: part.storm.met });
  }
  const wanted = [...CHAOS_MODES.map((mode) => mode.name), 'all-at-once'];
  const missing = [
    ...wanted.filter((name) => !phases[name] || phases[name].every((entry) => entry.skipped !== undefined)),
    ...(storms.length ? [] : ['storm']),
  ];
  const latest = (entries: Array<{ file: string; met: boolean }>) => entries[entries.length - 1];
  const superseded = Object.fromEntries(
    Object.entries(phases)
      .filter(([, entries]) => entries.length > 1)
      .map(([name, entries]) => [name, entries.slice(0, -1).map((entry) => ({ file: entry.file, met: entry.met }))]),
  );
  const met = missing.length === 0 && Object.values(phases).every((entries) => latest(entries).met) && (storms.length === 0 || latest(storms).met);
  process.stdout.write(
    `${JSON.stringify({
      bench: 'chaos',
      merged: parts.map(({ file, part }) => ({ file, instances: part.instances, stormInstances: part.stormInstances, modes: Object.keys(part.modes) })),
      phases: Object.fromEntries(Object.entries(phases).map(([name, entries]) => [name, { met: latest(entries).met, file: latest(entries).file }])),
      superseded,
      storm: storms,
      missing,
      goal: `every mode of the table on its own, all of them at once, and the storm, each met (lost == 0, duplicated == 0, stuck == 0, inbound accounted 100 %, settled within the settle time, recovery p99 <= ${MODE_GOAL_S} s, storm <= ${STORM_GOAL_S} s)`,
      met,
    })}\n`,
  );
}
