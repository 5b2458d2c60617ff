// Unit tests of the console's logic (plain TypeScript modules, no DOM); the browser test is the
// gateway's console.e2e.spec.ts.
module.exports = { ...require('../../jest.preset.js'), displayName: 'manager', rootDir: __dirname };
