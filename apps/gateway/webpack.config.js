const { makeAppConfig } = require('../../tools/webpack/app.config');
module.exports = makeAppConfig({ name: 'gateway', root: __dirname });
