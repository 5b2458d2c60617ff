#!/usr/bin/env node
// Self time by function over a V8 .cpuprofile (bench/history --profile): `node bench/history/cpuprofile-summary.mjs FILE [top]`.
// Also the total time under each function (inclusive), for the functions of the repository's own code.
import { readFileSync } from 'node:fs';
import process from 'node:process';

const say = (line) => process.stdout.write(`${line}\n`);

const [file, topArg] = process.argv.slice(2);
const top = Number(topArg ?? 30);
const profile = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const parent = new Map();
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
const selfMs = new Map();
const deltas = profile.timeDeltas;
profile.samples.forEach((id, index) => selfMs.set(id, (selfMs.get(id) ?? 0) + (deltas[index + 1] ?? 0) / 1000));
const total = [...selfMs.values()].reduce((a, b) => a + b, 0);
const label = (node) => {
  const { functionName, url, lineNumber } = node.callFrame;
  const where = url.replace(/^.*\/(dist|node_modules|libs|apps)\//, '$1/');
  return `${functionName || '(anonymous)'} ${where}:${lineNumber + 1}`;
};
const self = new Map();
const inclusive = new Map();
for (const [id, ms] of selfMs) {
  const node = byId.get(id);
  self.set(label(node), (self.get(label(node)) ?? 0) + ms);
  const seen = new Set();
  for (let at = id; at !== undefined; at = parent.get(at)) {
    const name = label(byId.get(at));
    if (seen.has(name)) continue;
    seen.add(name);
    inclusive.set(name, (inclusive.get(name) ?? 0) + ms);
  }
}
const print = (title, map, filter = () => true) => {
  say(`\n${title}`);
  for (const [name, ms] of [...map]
    .filter(([name]) => filter(name))
    .sort((a, b) => b[1] - a[1])
    .slice(0, top))
    say(`${ms.toFixed(0).padStart(8)} ms ${((ms * 100) / total).toFixed(1).padStart(5)} %  ${name}`);
};
say(`${file}: ${(total / 1000).toFixed(2)} s sampled`);
print('self time', self);
print('inclusive (excluding idle/program/gc roots)', inclusive, (name) => !/^\((root|idle|program|garbage collector)\)/.test(name));
