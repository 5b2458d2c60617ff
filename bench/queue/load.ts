/** The HTTP load: `count` requests, `--concurrency` at a time over undici keep-alive, timed one by one. */
import { CONCURRENCY, type LoadResult, PEER, quantile, round } from './options';

export async function drive(
  baseUrl: string,
  count: number,
  build: (index: number) => { method: 'POST' | 'DELETE'; path: string; token: string; body?: unknown },
): Promise<LoadResult> {
  const { Agent, request } = await import('undici');
  const agent = new Agent({ connections: CONCURRENCY, pipelining: 1, keepAliveTimeout: 60_000 });
  const latencies: number[] = [];
  let failed = 0;
  let firstError: string | undefined;
  let next = 0;
  const started = process.hrtime.bigint();
  try {
    await Promise.all(
      Array.from({ length: Math.min(CONCURRENCY, count) }, async () => {
        while (next < count) {
          const call = build(next++);
          const t0 = process.hrtime.bigint();
          try {
            const response = await request(`${baseUrl}${call.path}`, {
              method: call.method,
              dispatcher: agent,
              headers: { 'content-type': 'application/json', token: call.token },
              body: call.body === undefined ? undefined : JSON.stringify(call.body),
            });
            const text = await response.body.text();
            if (response.statusCode !== 200) throw new Error(`HTTP ${response.statusCode}: ${text.slice(0, 200)}`);
            latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
          } catch (error) {
            failed++;
            firstError ??= String((error as Error)?.message ?? error);
          }
        }
      }),
    );
  } finally {
    await agent.close();
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  latencies.sort((a, b) => a - b);
  return {
    ok: latencies.length,
    failed,
    ...(firstError ? { firstError } : {}),
    seconds: round(seconds, 2),
    perSecond: Math.round(latencies.length / seconds),
    p50Ms: round(quantile(latencies, 0.5)),
    p99Ms: round(quantile(latencies, 0.99)),
  };
}

export const textSend = (index: number) => ({ number: PEER, text: `bench message ${index}`, async: true });
