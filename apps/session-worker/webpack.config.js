const { makeAppConfig } = require('../../tools/webpack/app.config');
module.exports = makeAppConfig({ name: 'session-worker', root: __dirname });
