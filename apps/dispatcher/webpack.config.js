const { makeAppConfig } = require('../../tools/webpack/app.config');
module.exports = makeAppConfig({ name: 'dispatcher', root: __dirname });
