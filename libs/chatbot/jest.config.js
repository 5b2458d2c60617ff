module.exports = { ...require('../../jest.preset.js'), displayName: 'chatbot', rootDir: __dirname };
