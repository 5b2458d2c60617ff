// `npm test` runs every project's suite in one Jest run.
module.exports = {
  projects: ['<rootDir>/apps/*/jest.config.js', '<rootDir>/libs/*/jest.config.js'],
  // Baileys rc14 leaves timers behind that it never clears (a 30 s one after every prekey upload,
  // pending query timeouts after a socket closed); without this a run that paired devices would
  // linger after its last test. Our own handles are closed by every suite's afterAll.
  forceExit: true,
  // Hooks open schemas, start servers and link devices; on a busy 2-core machine 5 s is not enough.
  testTimeout: 30_000,
};
