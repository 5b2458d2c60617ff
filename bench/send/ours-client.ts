/** The orchestrator's side of ours: its HTTP client, and a request and reply ours answered (the floor carries those bytes). */
import { analyzeSchema, seedHistory } from '../support/postgres';
import { warmUpThenMeasure } from './load';
import { CONCURRENCY, HISTORY, INSTANCES, type LoadResult, peerPhone } from './options';
import type { OursReady } from './ours';

/** A request ours answered and its answer, as sent and received: the bytes the floor's hops carry. */
export const oursSample = { request: '', reply: '' };

/** The HTTP client for ours: undici with keep-alive, one connection per concurrent request. */
export async function driveOurs(ready: OursReady, databaseUrl: string): Promise<LoadResult> {
  const { Agent, request } = await import('undici');
  const pg = await import('pg');
  const agent = new Agent({ connections: CONCURRENCY, pipelining: 1, keepAliveTimeout: 60_000 });
  const url = `${ready.baseUrl}/send/text`;
  const operation = async (index: number) => {
    const body = JSON.stringify({ number: peerPhone(index), text: `bench message ${index}` });
    const response = await request(url, {
      method: 'POST',
      dispatcher: agent,
      headers: { 'content-type': 'application/json', token: ready.tokens[index % INSTANCES] },
      body,
    });
    const text = await response.body.text();
    if (response.statusCode !== 200) throw new Error(`HTTP ${response.statusCode}: ${text.slice(0, 200)}`);
    oursSample.request = body;
    oursSample.reply = text;
  };
  // The tables' statistics as a live database has them before the measured sends (analyzeSchema).
  const analyze = async () => {
    const client = new (pg.default?.Client ?? pg.Client)({ connectionString: databaseUrl });
    await client.connect();
    try {
      const queryable = { query: async (sql: string, parameters?: unknown[]) => (await client.query(sql, parameters)).rows };
      if (HISTORY > 0) await seedHistory(queryable, ready.schema, HISTORY);
      await analyzeSchema(queryable, ready.schema);
    } finally {
      await client.end();
    }
  };
  try {
    return await warmUpThenMeasure(operation, analyze);
  } finally {
    await agent.close();
  }
}
