module.exports = { ...require('../../jest.preset.js'), displayName: 'session-client', rootDir: __dirname };
