// Starts the embedded PostgreSQL and exits without stopping it, as a start that fails on a config
// error (process.exit) does: the server must not outlive this process.
import { startEmbeddedPostgres } from '../../src/embedded-postgres';

// `node ts-child.js <this file> <dataDir> <port>`
const [dataDir, port] = process.argv.slice(-2);
void startEmbeddedPostgres(dataDir, Number(port)).then((database) => {
  process.stdout.write(`${database.url}\n`);
  process.exit(3);
});
