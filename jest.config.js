// Every project's suites (`npm test` runs them in two Jest runs: tools/jest/test.js).
module.exports = {
  projects: ['<rootDir>/apps/*/jest.config.js', '<rootDir>/libs/*/jest.config.js'],
  // Baileys rc14 leaves timers behind that it never clears (a 30 s one after every prekey upload,
  // pending query timeouts after a socket closed); without this a run that paired devices would
  // linger after its last test. Our own handles are closed by every suite's afterAll.
  forceExit: true,
  // Hooks open schemas, start servers and link devices; on a busy 2-core machine 5 s is not enough.
  testTimeout: 30_000,
  // `npm test` (tools/jest/test.js) runs the files in two worker processes, each one file at a time,
  // and Jest replaces a worker once it holds more than this after a file: every file loads its own
  // copy of Baileys, the AI SDK, the AWS SDK… and some of them are never collected, so one process for
  // the ~190 files ran out of heap (4 GB) two thirds of the way through. Two workers: ~3 GB at most.
  workerIdleMemoryLimit: '1536MB',
};
