module.exports = { ...require('../../jest.preset.js'), displayName: 'service-host', rootDir: __dirname };
