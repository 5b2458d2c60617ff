module.exports = { ...require('../../jest.preset.js'), displayName: 'persistence', rootDir: __dirname };
