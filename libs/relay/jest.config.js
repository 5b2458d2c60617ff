module.exports = { ...require('../../jest.preset.js'), displayName: 'relay', rootDir: __dirname };
