module.exports = { ...require('../../jest.preset.js'), displayName: 'chatwoot', rootDir: __dirname };
