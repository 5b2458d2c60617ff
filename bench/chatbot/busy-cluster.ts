import { Client } from 'pg';
import { sleep } from './options';

/** `--busy-cluster`: a transaction with an id held 1 s of every 1.5 s on a connection of its own, until stopped; how many it ran. */
export function busyCluster(databaseUrl: string): { stop: () => Promise<number> } {
  let running = true;
  let transactions = 0;
  const client = new Client({ connectionString: databaseUrl });
  const loop = (async () => {
    await client.connect();
    while (running) {
      await client.query('BEGIN');
      await client.query('SELECT pg_current_xact_id()');
      await sleep(1_000);
      await client.query('COMMIT');
      transactions++;
      if (running) await sleep(500);
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop.finally(() => client.end());
      return transactions;
    },
  };
}
