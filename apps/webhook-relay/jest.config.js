module.exports = { ...require('../../jest.preset.js'), displayName: 'webhook-relay', rootDir: __dirname };
