#!/usr/bin/env node
// Per-suite wall times of Jest runs written with --json (`TEST_JSON=<prefix> npm test` writes
// <prefix>-parallel.json and <prefix>-serial.json): the slowest suites, and each run's wall time.
//   node tools/jest/times.js <run.json>... [--top 25]
const { readFileSync } = require('node:fs');

const args = process.argv.slice(2);
const topAt = args.indexOf('--top');
const top = topAt >= 0 ? Number(args.splice(topAt, 2)[1]) : 25;
const suites = [];
for (const file of args) {
  const run = JSON.parse(readFileSync(file, 'utf8'));
  const ends = run.testResults.map((result) => result.endTime);
  const wall = ends.length ? (Math.max(...ends) - run.startTime) / 1000 : 0;
  console.log(`${file}: ${run.numTotalTestSuites} suites, ${run.numTotalTests} tests, ${run.numFailedTests} failed, wall ${wall.toFixed(0)} s`);
  for (const result of run.testResults) {
    suites.push({
      path: result.name.replace(/^.*?\/((apps|libs)\/)/, '$1'),
      seconds: (result.endTime - result.startTime) / 1000,
      failed: result.status === 'failed',
    });
  }
}
suites.sort((a, b) => b.seconds - a.seconds);
console.log(`\n| # | suite | s |\n|---|---|---|`);
suites.slice(0, top).forEach((suite, index) => console.log(`| ${index + 1} | ${suite.path} | ${suite.seconds.toFixed(1)}${suite.failed ? ' (failed)' : ''} |`));
console.log(`\nsum of suite times: ${suites.reduce((sum, suite) => sum + suite.seconds, 0).toFixed(0)} s over ${suites.length} suites`);
