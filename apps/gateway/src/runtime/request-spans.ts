import { extractTraceContext, failSpan, type Span, SpanKind, startSpan, withSpan } from '@gw/platform';
import type { FastifyInstance, FastifyRequest } from 'fastify';

/**
 * One server span per HTTP request (tracing on only): started when the request comes (continuing the
 * caller's `traceparent`, if it sent one), made active for the guards, the handler and everything they
 * call (the bus request's span is its child), ended when the response is written. Returns what the
 * access line adds: the request's `trace_id` (that line is written after the span ended).
 */
export function requestSpans(fastify: FastifyInstance): { traceFields(request: FastifyRequest): { trace_id?: string } } {
  const spans = new WeakMap<FastifyRequest, Span>();
  fastify.addHook('onRequest', (request, _reply, done) => {
    // The route's pattern (`/send/text`), never the URL: one span name per route, no ids or tokens in it.
    const route = request.routeOptions.url ?? 'unmatched';
    const span = startSpan('gateway', `${request.method} ${route}`, {
      kind: SpanKind.SERVER,
      parent: extractTraceContext({ get: (name) => request.headers[name] }),
      attributes: { 'http.request.method': request.method, 'http.route': route },
    });
    if (span) spans.set(request, span);
    done();
  });
  // After the body is parsed (its stream's callbacks run outside any context): what runs from here on
  // (guards, interceptors, the handler) starts inside the span's context.
  fastify.addHook('preHandler', (request, _reply, done) => withSpan(spans.get(request), done));
  fastify.addHook('onResponse', (request, reply, done) => {
    const span = spans.get(request);
    if (span) {
      span.setAttribute('http.response.status_code', reply.statusCode);
      if (reply.statusCode >= 500) failSpan(span, new Error(`HTTP ${reply.statusCode}`));
      span.end();
    }
    done();
  });
  return {
    traceFields: (request) => {
      const span = spans.get(request);
      return span ? { trace_id: span.spanContext().traceId } : {};
    },
  };
}
