module.exports = { ...require('../../jest.preset.js'), displayName: 'dispatcher', rootDir: __dirname };
