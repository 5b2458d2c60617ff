const { makeAppConfig } = require('../../tools/webpack/app.config');
module.exports = makeAppConfig({ name: 'webhook-relay', root: __dirname });
