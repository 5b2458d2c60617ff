import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { HealthService } from './health/health.service';

/**
 * A gateway's stop on SIGTERM, so that a rolling restart drops no request:
 * 1. `/ready` answers 503 at once (a load balancer or Kubernetes stops routing here), while everything
 *    else is still served for `delayMs` (DRAIN_DELAY_MS; 0 under Kubernetes, whose preStop sleep waits);
 * 2. the HTTP server stops accepting and finishes the requests in flight (Fastify's close: new requests
 *    on open connections get 503, idle connections are closed, /sse streams ended by its preClose hook);
 * 3. only then Nest's shutdown hooks run (link previews, the embedded services' sessions and loops):
 *    `app.close()` alone would run the destroy hooks before closing the server, under requests in flight.
 * The caller closes the bus and Postgres after it.
 */
export async function drainHttpApp(app: NestFastifyApplication, delayMs: number): Promise<void> {
  app.get(HealthService).startDraining();
  if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
  try {
    await app.getHttpAdapter().getInstance().close();
  } finally {
    await app.close();
  }
}
