module.exports = { ...require('../../jest.preset.js'), displayName: 'wa-sim', rootDir: __dirname };
