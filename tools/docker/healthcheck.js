#!/usr/bin/env node
// Container health check without curl or wget in the image:
//   node tools/docker/healthcheck.js <port> [path=/ready]
// Exits 0 when GET http://127.0.0.1:<port><path> answers 2xx within 3 seconds, else 1.
const http = require('node:http');

const [port, path = '/ready'] = process.argv.slice(2);
if (!/^\d+$/.test(port ?? '')) {
  process.stderr.write('usage: healthcheck.js <port> [path]\n');
  process.exit(2);
}
const request = http.get({ host: '127.0.0.1', port: Number(port), path, timeout: 3000 }, (response) => {
  response.resume();
  process.exit(response.statusCode >= 200 && response.statusCode < 300 ? 0 : 1);
});
request.on('timeout', () => request.destroy(new Error('timed out')));
request.on('error', (error) => {
  process.stderr.write(`${error.message}\n`);
  process.exit(1);
});
