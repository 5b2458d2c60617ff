#!/usr/bin/env node
// `npm test`. With arguments (`npm test -- <spec path>`, or any Jest option) it is one Jest run with
// them, the files one after another in one worker (`--maxWorkers=1`), as it always was.
//
// Without arguments it is two Jest runs over every project (jest.config.js):
//   1. every suite but the few below, in two workers: the suites keep to their own schema
//      (openTestDatabase), simulator, servers on port 0 and in-process bus, so two at a time cannot
//      see each other, and most of an e2e suite's time is Baileys and the simulator waiting on each
//      other, not CPU (docs/bench/ci-time.md);
//   2. then the suites of `SERIAL`, one after another in one worker.
// Both runs always run; the exit status is the first failure's.
const { existsSync } = require('node:fs');
const { availableParallelism } = require('node:os');
const { join, relative } = require('node:path');
const { spawnSync } = require('node:child_process');

const ROOT = join(__dirname, '../..');
/** libs/testing/src/private-nats.ts's NATS_SERVER_BINARY. */
const NATS_SERVER_BINARY = '/usr/sbin/nats-server';

/**
 * Suites that must not run beside another one, each for a reason a second suite could break:
 * shared NATS subjects or the public schema, a lock or a view of the whole database.
 */
const SERIAL = [
  // Two session workers on the machine's NATS, one drained: another stack's worker would answer (or take
  // over) its instances' subjects and placements.
  'apps/gateway/test/worker-drain.e2e.spec.ts',
  // A session worker and gateway on the machine's NATS, the worker's Postgres cut for 15 s (issue #39):
  // another stack's worker would take its placements, and its timing is judged against the lease.
  'apps/gateway/test/postgres-outage.e2e.spec.ts',
  // The background services as deployed: the public schema of the test database, the machine's NATS,
  // and the dispatcher's retention purge, whose advisory lock is one for the whole database
  // (libs/dispatch/test/retention.spec.ts takes it too).
  'apps/dispatcher/test/dispatcher-runtime.spec.ts',
  'apps/webhook-relay/test/webhook-relay-runtime.spec.ts',
  // They count (and one cancels) sessions in pg_stat_activity across the whole database: another
  // suite's open transaction or lock wait would be counted or cancelled.
  'libs/persistence/test/fenced-transaction-pipelined.spec.ts',
  'libs/persistence/test/lease.repository.spec.ts',
  // Its phases are judged within settle windows (every inbound message stored within so many seconds of a
  // fault): alone, it measures our recovery and not a neighbour's load on the two cores.
  'apps/gateway/test/chaos.e2e.spec.ts',
  // A session worker (and gateway) on a NATS: `session.place` and the instance subjects are the same for
  // every stack on one NATS (a second stack's worker would take the other's placements). They start a
  // nats-server of their own (libs/testing startPrivateNats) and run beside the others — alone only where
  // the binary is missing and they take the machine's NATS.
  ...(existsSync(NATS_SERVER_BINARY) ? [] : ['apps/gateway/test/chatbot-crash.e2e.spec.ts', 'libs/sessions/test/session-rpc-nats.e2e.spec.ts']),
];

/** Workers of the first run: the CI machine has 2 cores (1 on a machine with one). TEST_WORKERS=1 runs it serially. */
const WORKERS = Number(process.env.TEST_WORKERS ?? Math.min(2, availableParallelism()));

function jest(args) {
  const nodeOptions = [process.env.NODE_OPTIONS, '--experimental-vm-modules'].filter(Boolean).join(' ');
  const run = spawnSync(process.execPath, [require.resolve('jest/bin/jest'), ...args], {
    cwd: ROOT,
    stdio: 'inherit',
    env: { ...process.env, NODE_OPTIONS: nodeOptions },
  });
  if (run.error) throw run.error;
  return run.status ?? 1;
}

const args = process.argv.slice(2);
if (args.length) process.exit(jest(['--maxWorkers=1', ...args]));

const missing = SERIAL.filter((path) => !existsSync(join(ROOT, path)));
if (missing.length) {
  console.error(`tools/jest/test.js: SERIAL names files that do not exist: ${missing.join(', ')}`);
  process.exit(1);
}
// `TEST_JSON=<prefix>` writes each run's results (per-suite times) to <prefix>-parallel.json and <prefix>-serial.json.
const json = (name) => (process.env.TEST_JSON ? ['--json', `--outputFile=${process.env.TEST_JSON}-${name}.json`] : []);
const asPattern = (path) => path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const started = Date.now();
const parallel = jest([`--maxWorkers=${WORKERS}`, ...json('parallel'), '--testPathIgnorePatterns', '/node_modules/', ...SERIAL.map(asPattern)]);
const parallelSeconds = Math.round((Date.now() - started) / 1000);
const serial = jest(['--maxWorkers=1', ...json('serial'), '--runTestsByPath', ...SERIAL]);
const seconds = (Date.now() - started) / 1000;
console.log(
  `npm test: ${Math.round(seconds)} s (${parallelSeconds} s in ${WORKERS} workers, then ${SERIAL.length} suites one at a time); ` +
    `${relative(ROOT, __filename)} ${parallel || serial ? 'failed' : 'passed'}`,
);
process.exit(parallel || serial);
