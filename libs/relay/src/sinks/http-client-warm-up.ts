import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';

/**
 * Rounds of requests, and requests at once in each: enough for undici's code and its parser to be compiled and hot.
 * Measured in a fresh Node 26 process on loopback (8 requests at once to a server in another process), the client's
 * CPU per request over its first 250 requests: 761 µs cold, 526 µs after 200 warm-up requests (25 rounds, the
 * earlier count), 230 µs after 800, 240 µs after 4,000; ~60 µs once hot (from ~750 requests on, without a warm-up).
 * The first 250 requests of new connections keep some of it whatever the warm-up (their connections and parsers
 * are new).
 */
const ROUNDS = 100;
const AT_ONCE = 8;
/** The most the warm-up may take; past it, it gives up (the relay then starts with part of it warm). */
const DEADLINE_MS = 2_000;

/**
 * Sends several hundred POSTs through undici to a server of its own on loopback, then closes both.
 *
 * A relay's first webhook requests paid for undici's first use: the HTTP parser (llhttp, WebAssembly)
 * is compiled on the first connection of the process, synchronously, and runs in the baseline tier
 * until it is hot; undici's own functions are cold too. Measured in a fresh process on this machine: the
 * first 8 requests took 25-46 ms, the next ~1-2 ms (issue #38: the first second's p99 of a fresh relay
 * was about twice the rest's). 800 requests rather than the first 200: bench/webhooks' cold-start p99 (the
 * first second of a fresh relay at 1,000 events/s) fell from a median of 128.5 to 83.5 ms over eight
 * alternating pairs (docs/bench/webhooks.md, 2026-12-06). The receivers' connections are not warmed (a
 * request to a customer's URL is not ours to make), only the code that serves them: the parser's compiled
 * module is shared by every connection of the process. No user input reaches this: the address is the
 * loopback server's own. Returns how many requests were answered (`rounds` and `deadlineMs`: for the spec).
 */
export async function warmHttpClient(rounds = ROUNDS, deadlineMs = DEADLINE_MS): Promise<number> {
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => response.end('{}'));
  });
  const agent = new Agent({ connections: AT_ONCE, keepAliveTimeout: 1_000 });
  const body = JSON.stringify({ event: 'warm-up', payload: 'x'.repeat(512) });
  const deadline = performance.now() + deadlineMs;
  let answered = 0;
  try {
    const origin = await listen(server);
    for (let round = 0; round < rounds && performance.now() < deadline; round += 1) {
      await Promise.all(
        Array.from({ length: AT_ONCE }, async () => {
          const response = await agent.request({ origin, path: '/', method: 'POST', body, headers: { 'content-type': 'application/json' } });
          await response.body.dump();
          answered += 1;
        }),
      );
    }
  } finally {
    await agent.close().catch(() => undefined);
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
  return answered;
}

function listen(server: Server): Promise<string> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`));
  });
}
