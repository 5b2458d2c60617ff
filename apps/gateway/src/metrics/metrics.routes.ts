import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { MetricsRepository } from '@gw/persistence';
import { buildInfo, metrics, type MetricsConfig, type MetricsSources, secretsEqual } from '@gw/platform';

/**
 * `GET /metrics` (Prometheus text format; with METRICS_TOKEN set, only for `Authorization: Bearer
 * <token>`) and `GET /version`. Plain Fastify routes, like /openapi.json: outside the API, its guards,
 * rate limits and OpenAPI document.
 *
 * The gateway's registry is the process's: embedded, it shows every service of the process once. It
 * reads the instances by status from Postgres on each scrape (one reader however many workers run),
 * and, when it embeds the dispatcher and the relay, their queue and backlog too (separate, they report
 * them on their own health ports).
 */
export function serveMetrics(app: NestFastifyApplication, config: MetricsConfig, options: { embedded: boolean }): void {
  const repository = app.get(MetricsRepository);
  const sources: MetricsSources = {
    instancesByStatus: () => repository.instancesByStatus(),
    databasePool: () => repository.databasePool(),
    ...(options.embedded ? { asyncQueue: () => repository.asyncQueueByState(), webhookBacklog: () => repository.webhookBacklog() } : {}),
  };
  metrics().useSources(sources);
  const expected = config.token === undefined ? undefined : `Bearer ${config.token}`;
  const fastify = app.getHttpAdapter().getInstance();
  fastify.get('/metrics', async (request, reply) => {
    const given = request.headers.authorization;
    if (expected !== undefined && (typeof given !== 'string' || !secretsEqual(given, expected))) {
      return reply.status(401).header('www-authenticate', 'Bearer realm="metrics"').send({ error: 'Invalid token' });
    }
    const { contentType, body } = await metrics().exposition();
    return reply.header('content-type', contentType).header('cache-control', 'no-store').send(body);
  });
  fastify.get('/version', async () => buildInfo());
  fastify.addHook('onClose', (_instance, done) => {
    metrics().dropSources(sources);
    done();
  });
}
