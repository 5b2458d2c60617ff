import { ErrorCode, RpcError, isRpcErrorBody, type RpcErrorBody } from '@gw/contracts';
import { type Context, failSpan, inSpan, SpanKind, type TracedService } from '@gw/platform';

/** What a handler's reply looks like on the wire: exactly one of result or error. */
export type ReplyEnvelope = { ok: true; result: unknown } | { ok: false; error: RpcErrorBody };

export type BusHandler = (data: unknown, subject: string) => unknown | Promise<unknown>;

export interface SubscribeOptions {
  /** Queue group: each message goes to one member of the group only. */
  queue?: string;
}

export interface BusSubscription {
  /** Stops at once: a message the transport already routed here but not yet handed to the handler is dropped. */
  unsubscribe(): void;
  /**
   * Stops taking messages, but handles (and answers) every one already routed here: a request the
   * transport gave to this subscriber is never left unanswered for the requester to time out on
   * (issue #39: a draining worker's instance subscriptions). Resolves once no more can arrive.
   */
  drain(): Promise<void>;
}

export interface RequestOptions {
  timeoutMs: number;
}

/**
 * The one messaging seam between our services. Two implementations keep the same contract:
 * NATS (separate processes, many machines) and in-process (the embedded `npm start`).
 *
 * - request: one reply or an RpcError; "nobody subscribed" is ErrorCode.NoSession at once, not a timeout.
 * - publish: fire and forget, at most once (what must not be lost goes to Postgres first).
 */
export abstract class Bus {
  abstract request<T>(subject: string, data: unknown, options: RequestOptions): Promise<T>;
  abstract publish(subject: string, data: unknown): void;
  abstract subscribe(subject: string, handler: BusHandler, options?: SubscribeOptions): BusSubscription;
  abstract ping(): Promise<void>;
  abstract close(): Promise<void>;

  /**
   * Told each time the connection is back on a server after losing one (NATS: on another server of the cluster,
   * its subscriptions made again). A request routed to this process through the lost server was lost with it.
   * The in-process bus never loses its server: never told.
   */
  onRejoin(listener: () => void): void {
    void listener;
  }
}

/** Runs a handler and turns its outcome (value or thrown error) into a reply envelope. */
export async function runHandler(handler: BusHandler, data: unknown, subject: string): Promise<ReplyEnvelope> {
  try {
    const result = await handler(data, subject);
    return { ok: true, result: result === undefined ? null : result };
  } catch (error) {
    if (error instanceof RpcError) return { ok: false, error: error.toBody() };
    return { ok: false, error: { code: ErrorCode.Internal, message: 'internal error' } };
  }
}

/** A subject as a span names it: without the instance id (one name per op, not one per instance). */
export function spanSubject(subject: string): string {
  return subject.replace(/^instance\.[^.]+\./, 'instance.*.');
}

/** The attributes of a bus span (OpenTelemetry's messaging conventions). */
function busAttributes(subject: string, system: string) {
  return { 'messaging.system': system, 'messaging.destination.name': spanSubject(subject) };
}

/**
 * A request inside a client span of `service` (tracing on only; the caller checks): `send` runs with
 * the span active, so what it injects into the message's headers names this span as the parent.
 */
export function tracedRequest<T>(service: TracedService, system: string, subject: string, send: () => Promise<T>): Promise<T> {
  return inSpan(service, `bus ${spanSubject(subject)}`, { kind: SpanKind.CLIENT, attributes: busAttributes(subject, system) }, send);
}

/** runHandler inside a server span of `service` that continues `parent` (the context the request's headers carry). */
export function runTracedHandler(
  service: TracedService,
  system: string,
  parent: Context,
  handler: BusHandler,
  data: unknown,
  subject: string,
): Promise<ReplyEnvelope> {
  return inSpan(service, `handle ${spanSubject(subject)}`, { kind: SpanKind.SERVER, parent, attributes: busAttributes(subject, system) }, async (span) => {
    const envelope = await runHandler(handler, data, subject);
    if (!envelope.ok) failSpan(span, new Error(envelope.error.code));
    return envelope;
  });
}

/** The service a bus connection's name belongs to (`session-worker-<id>` is the session worker's). */
export function serviceOfConnection(name: string): TracedService {
  for (const service of ['session-worker', 'webhook-relay', 'dispatcher'] as const) if (name.startsWith(service)) return service;
  return 'gateway';
}

/** Turns a reply envelope back into a value, or throws the RpcError it carries. */
export function unwrapReply<T>(envelope: unknown): T {
  if (typeof envelope === 'object' && envelope !== null && 'ok' in envelope) {
    const reply = envelope as ReplyEnvelope;
    if (reply.ok) return reply.result as T;
    if (isRpcErrorBody(reply.error)) throw RpcError.fromBody(reply.error);
  }
  throw new RpcError(ErrorCode.Internal, 'malformed reply');
}

/** NATS subject matching: `*` is one token, `>` is one or more trailing tokens. */
export function subjectMatches(pattern: string, subject: string): boolean {
  const p = pattern.split('.');
  const s = subject.split('.');
  for (let i = 0; i < p.length; i++) {
    if (p[i] === '>') return s.length > i;
    if (i >= s.length) return false;
    if (p[i] !== '*' && p[i] !== s[i]) return false;
  }
  return p.length === s.length;
}
