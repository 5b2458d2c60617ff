const preset = require('../../jest.preset.js');

// Note: Baileys rc14 leaves a 30 s timer behind after every prekey upload (socket.js uploadPreKeys
// races a setTimeout it never clears), so a run that paired devices stays alive ~30 s after the
// last test. The nx test target passes --forceExit (it is not allowed in a project config).
module.exports = {
  ...preset,
  displayName: 'wa-sim',
  rootDir: __dirname,
  setupFiles: [...preset.setupFiles, '<rootDir>/test/setup.ts'],
};
