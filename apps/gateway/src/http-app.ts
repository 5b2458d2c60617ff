import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { configureMetrics, PinoNestLogger, tracingEnabled } from '@gw/platform';
import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { GatewayModule, type GatewayRuntime } from './app.module';
import { AuditRecorder } from './audit/audit-recorder';
import { instanceLimitBeforeBody } from './common/auth.guards';
import { RateLimitService } from './common/rate-limit.service';
import { serveConsole } from './console/console.routes';
import { HealthService } from './health/health.service';
import { serveSandboxRelay } from './console/sandbox-relay';
import { serveMetrics } from './metrics/metrics.routes';
import { serveMcp } from './mcp/mcp.routes';
import { serveApiDocs } from './openapi/openapi.routes';
import { answerClientError } from './runtime/client-error';
import { JSON_BODY_LIMITS, useJsonBodyParser } from './runtime/json-body';
import { requestSpans } from './runtime/request-spans';
import { checkUrlValues, frameworkError, URL_VALUE_LIMITS } from './runtime/url-values';

/** Builds the HTTP application (Fastify) around an opened runtime; the caller listens. */
export async function createHttpApp(
  runtime: GatewayRuntime,
  /** `simulatorControlUrl`: the sandbox's embedded simulator, whose phones the console may play (/sandbox/sim/*). */
  options: { simulatorControlUrl?: string } = {},
): Promise<NestFastifyApplication> {
  // Before any module records: METRICS_PER_INSTANCE decides the labels.
  const { httpRequests, httpRequestDuration } = configureMetrics({ perInstance: runtime.config.metrics.perInstance });
  const adapter = new FastifyAdapter({
    bodyLimit: JSON_BODY_LIMITS.maxBytes,
    // Correlation id: the client's X-Request-ID when it sends a sane one, else ours.
    genReqId: (request: { headers: Record<string, string | string[] | undefined> }) => {
      const given = request.headers['x-request-id'];
      return typeof given === 'string' && /^[\w.:-]{1,100}$/.test(given) ? given : randomUUID();
    },
    logger: false,
    // X-Forwarded-For only from the proxies named in TRUST_PROXY (none by default: a client could name any address).
    trustProxy: runtime.config.trustProxy.length ? runtime.config.trustProxy : false,
    maxParamLength: URL_VALUE_LIMITS.maxParamLength,
    // What Node's HTTP parser refuses (malformed HTTP, headers over 16 KB, a request too slow) answers `{error}` too.
    clientErrorHandler: answerClientError,
    // A URL the router refuses (bad percent-encoding, a path parameter over the limit) answers `{error}` too.
    frameworkErrors: (error: Error & { code?: string }, _request: FastifyRequest, reply: FastifyReply) => {
      const refused = frameworkError(error);
      void reply.status(refused.status).header('content-type', 'application/json; charset=utf-8').send(refused.body());
    },
  });
  const app = await NestFactory.create<NestFastifyApplication>(GatewayModule.register(runtime), adapter, {
    logger: new PinoNestLogger(runtime.logger.child({ component: 'nest' })),
    bufferLogs: false,
    abortOnError: false,
  });
  useJsonBodyParser(app);
  const fastify = app.getHttpAdapter().getInstance();
  // Callback hooks, not async ones: an async hook costs every request a promise and a microtask turn.
  // With tracing on (OTEL_EXPORTER_OTLP_ENDPOINT), every request is a server span, active in its handler.
  const spans = tracingEnabled() ? requestSpans(fastify) : undefined;
  const health = app.get(HealthService);
  fastify.addHook('onSend', (request, reply, _payload, done) => {
    void reply.header('x-request-id', request.id);
    // Draining (SIGTERM, drain.ts): each answer closes its connection, so that when the server stops accepting
    // no client holds an idle keep-alive connection to send its next request on: that request would meet
    // the close and the client could not tell whether it was done (bench/cluster: "other side closed").
    if (health.draining) void reply.header('connection', 'close');
    done();
  });
  // Audited routes (`@Audited`) are recorded as they are answered, their status known; the write is off the request path.
  fastify.addHook('onSend', app.get(AuditRecorder).onSend);
  fastify.addHook('onResponse', (request, reply, done) => {
    // The route's pattern (`/send/text`, `/files/:id`), never the URL; unknown routes are one label value.
    const route = request.routeOptions.url ?? 'unmatched';
    const labels = { method: request.method, route, status: reply.statusCode };
    httpRequests.inc(labels);
    httpRequestDuration.observe(labels, reply.elapsedTime / 1000);
    // The access line's fields are only gathered when it is written.
    if (runtime.logger.isLevelEnabled('info')) {
      const instance = (request as unknown as { instance?: { id: string } }).instance;
      runtime.logger.info(
        {
          requestId: request.id,
          instanceId: instance?.id,
          method: request.method,
          url: request.url.split('?')[0],
          status: reply.statusCode,
          ms: Math.round(reply.elapsedTime),
          ...spans?.traceFields(request),
        },
        'request',
      );
    }
    done();
  });
  // An /sse stream never ends by itself: closing the app ends the open ones, or an open console (or any
  // event reader) would hold Ctrl-C until main.ts's 15 s deadline exits without closing the database.
  const streams = new Set<ServerResponse>();
  fastify.addHook('onRequest', (request, reply, done) => {
    // Path and query values no route can take (NUL, lone surrogates, over-long): a 400 before any guard or query.
    try {
      checkUrlValues(request);
    } catch (error) {
      done(error as Error);
      return;
    }
    if (request.url.startsWith('/sse')) {
      const raw = reply.raw;
      streams.add(raw);
      raw.once('close', () => streams.delete(raw));
    }
    done();
  });
  fastify.addHook('preClose', (done) => {
    for (const raw of streams) raw.end();
    done();
  });
  // A tenant over its request limit is refused before its body is read: its flood costs the others no parsing.
  fastify.addHook('onRequest', instanceLimitBeforeBody(app.get(RateLimitService)));
  // GET /openapi.json and GET /docs, without a token; the document is built on first use.
  const apiDocs = serveApiDocs(app);
  // POST /mcp: the API's routes as MCP tools for AI agents, generated from the same document.
  serveMcp(app, apiDocs.document);
  // GET /metrics (METRICS_TOKEN) and GET /version.
  serveMetrics(app, runtime.config.metrics, { embedded: Boolean(runtime.embedded?.length) });
  // The operator console at /manager (/ and /dashboard lead there); in the sandbox, its phones' relay.
  await serveConsole(app, { dir: runtime.config.consoleDir, logger: runtime.logger });
  if (options.simulatorControlUrl) serveSandboxRelay(app, { controlUrl: options.simulatorControlUrl, logger: runtime.logger });
  // No enableShutdownHooks(): main.ts owns SIGINT/SIGTERM and closes the app, then the bus, then the
  // embedded Postgres. Nest's hook would close the app and re-raise the signal, ending the process
  // before the rest is closed (the embedded Postgres was left running).
  return app;
}
