module.exports = { ...require('../../jest.preset.js'), displayName: 'dispatch', rootDir: __dirname };
