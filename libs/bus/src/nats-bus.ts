import { connect, headers, NoRespondersError, RequestError, TimeoutError, type MsgHdrs, type NatsConnection } from '@nats-io/transport-node';
import { ErrorCode, RpcError } from '@gw/contracts';
import { extractTraceContext, injectTraceHeaders, metrics, type TracedService, tracingEnabled } from '@gw/platform';
import {
  Bus,
  type BusHandler,
  type BusSubscription,
  type RequestOptions,
  type SubscribeOptions,
  runHandler,
  runTracedHandler,
  serviceOfConnection,
  tracedRequest,
  unwrapReply,
} from './bus';
import { natsServerOptions } from './nats-options';

const encoder = new TextEncoder();
/** close() waits this long at most for handlers still answering (a sync send waits for its ack). */
const CLOSE_WAIT_MS = 10_000;
const decoder = new TextDecoder();

/**
 * A request in flight when the connection lost its server (a NATS node killed or cut off): its reply, or
 * the request itself, may have been in that server and will never come. It is failed at once rather than
 * at its timeout; a Timeout to callers that cannot repeat the request, and a request that is safe to
 * repeat (a send; TakeoverRequester) is sent again once the client is on another server of the cluster.
 */
export class ConnectionLostError extends RpcError {
  constructor(subject: string) {
    super(ErrorCode.Timeout, `the bus lost its NATS server with request ${subject} in flight`);
  }
}

/** The bus over core NATS: request/reply for commands, plain publish for notifications. */
export class NatsBus extends Bus {
  /** How to fail each request in flight, should the connection lose its server. */
  private readonly inFlight = new Set<(error: Error) => void>();
  /** The subscriptions open now (close drains them first). */
  private readonly subscriptions = new Set<BusSubscription>();
  /** Messages taken whose handler has not answered yet (close waits for them). */
  private readonly handling = new Set<Promise<void>>();
  /** Told when the connection is back on a server (onRejoin). */
  private readonly rejoinListeners: Array<() => void> = [];

  private constructor(
    private readonly connection: NatsConnection,
    /** Whose spans this connection's requests and handlers make (tracing on). */
    private readonly service: TracedService,
    /** How long close waits at most for the handlers still running. */
    private readonly closeWaitMs: number,
  ) {
    super();
  }

  /**
   * `name`: the connection's name at the server; it also says whose spans the bus makes (serviceOfConnection).
   * `closeWaitMs`: how long close() waits at most for handlers still answering (default 10 s).
   */
  static async connect(url: string, name: string, options: { closeWaitMs?: number } = {}): Promise<NatsBus> {
    // noAsyncTraces: without it the client builds an Error (a captured stack) at the start of every
    // request and every timed subscription, in case it fails: bench/send's gateway profile showed the
    // RequestError constructor as the client's largest self time. The errors we map below keep their
    // classes and causes; only the caller's stack is not attached. Every server of the URL (a cluster's),
    // its credentials as options (natsServerOptions), reconnecting for ever: a lost server is left for another.
    const connection = await connect({ ...natsServerOptions(url), name, maxReconnectAttempts: -1, reconnectTimeWait: 500, noAsyncTraces: true });
    const bus = new NatsBus(connection, serviceOfConnection(name), options.closeWaitMs ?? CLOSE_WAIT_MS);
    void bus.failInFlightOnDisconnect();
    return bus;
  }

  private async failInFlightOnDisconnect(): Promise<void> {
    for await (const status of this.connection.status()) {
      if (status.type === 'reconnect') {
        for (const listener of this.rejoinListeners) {
          try {
            listener();
          } catch {
            // a listener's failure is its own
          }
        }
        continue;
      }
      if (status.type !== 'disconnect') continue;
      for (const fail of this.inFlight) fail(new Error('disconnected'));
      this.inFlight.clear();
    }
  }

  override onRejoin(listener: () => void): void {
    this.rejoinListeners.push(listener);
  }

  request<T>(subject: string, data: unknown, options: RequestOptions): Promise<T> {
    // Traced: a client span, its context in the message's `traceparent` header (W3C), continued by the handler.
    if (tracingEnabled())
      return tracedRequest(this.service, 'nats', subject, () => metrics().timeBusRequest(subject, this.requestOnce<T>(subject, data, options, traceHeaders())));
    return metrics().timeBusRequest(subject, this.requestOnce<T>(subject, data, options));
  }

  private async requestOnce<T>(subject: string, data: unknown, options: RequestOptions, traced?: MsgHdrs): Promise<T> {
    let fail: (error: Error) => void = () => undefined;
    const lost = new Promise<never>((_, reject) => (fail = reject));
    this.inFlight.add(fail);
    try {
      const message = await Promise.race([
        this.connection.request(subject, encode(data), { timeout: options.timeoutMs, ...(traced ? { headers: traced } : {}) }),
        lost.catch(() => {
          throw new ConnectionLostError(subject);
        }),
      ]);
      return unwrapReply<T>(JSON.parse(decoder.decode(message.data)));
    } catch (error) {
      if (error instanceof RpcError) throw error;
      if (error instanceof NoRespondersError || (error instanceof RequestError && error.isNoResponders())) {
        throw new RpcError(ErrorCode.NoSession, `no responders for ${subject}`, { notRun: true });
      }
      if (error instanceof TimeoutError || (error instanceof RequestError && error.cause instanceof TimeoutError)) {
        throw new RpcError(ErrorCode.Timeout, `request ${subject} timed out`);
      }
      throw new RpcError(ErrorCode.Internal, `bus request failed: ${(error as Error).message}`);
    } finally {
      this.inFlight.delete(fail);
    }
  }

  publish(subject: string, data: unknown): void {
    this.connection.publish(subject, encode(data));
  }

  subscribe(subject: string, handler: BusHandler, options: SubscribeOptions = {}): BusSubscription {
    const subscription = this.connection.subscribe(subject, {
      queue: options.queue,
      callback: (error, message) => {
        if (error) return;
        let payload: unknown = null;
        try {
          payload = message.data.length ? JSON.parse(decoder.decode(message.data)) : null;
        } catch {
          if (message.reply) message.respond(encode({ ok: false, error: { code: ErrorCode.BadRequest, message: 'malformed payload' } }));
          return;
        }
        const run = tracingEnabled()
          ? runTracedHandler(this.service, 'nats', extractTraceContext(message.headers), handler, payload, message.subject)
          : runHandler(handler, payload, message.subject);
        const answered = run.then((envelope) => {
          if (message.reply && !this.connection.isClosed()) message.respond(encode(envelope));
        });
        this.handling.add(answered);
        void answered.finally(() => this.handling.delete(answered));
      },
    });
    const tracked: BusSubscription = {
      unsubscribe: () => {
        this.subscriptions.delete(tracked);
        subscription.unsubscribe();
      },
      // UNSUB, then a round trip: messages the server routed before it saw the UNSUB still reach the
      // callback (a plain unsubscribe drops them at the client, and their requesters wait out their timeout).
      drain: async () => {
        this.subscriptions.delete(tracked);
        if (subscription.isClosed() || this.connection.isClosed()) return;
        await subscription.drain().catch(() => subscription.unsubscribe());
      },
    };
    this.subscriptions.add(tracked);
    return tracked;
  }

  async ping(): Promise<void> {
    await this.connection.flush();
  }

  /**
   * Every request taken is answered before the connection goes (issue #39: a draining session worker's
   * last sends): the subscriptions stop taking messages (those already routed here are still handled),
   * the handlers still running are awaited for at most `closeWaitMs`, and only then is the connection
   * drained (after which nothing can be published, a reply included).
   */
  async close(): Promise<void> {
    if (this.connection.isClosed()) return;
    await Promise.allSettled([...this.subscriptions].map((subscription) => subscription.drain()));
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<void>((resolve) => (timer = setTimeout(resolve, this.closeWaitMs)));
    while (this.handling.size > 0) {
      const done = await Promise.race([Promise.allSettled([...this.handling]).then(() => true), expired.then(() => false)]);
      if (!done) break;
    }
    clearTimeout(timer);
    await this.connection.drain().catch(() => this.connection.close());
  }
}

/** NATS headers holding the active span's `traceparent` (and `tracestate`). */
function traceHeaders(): MsgHdrs {
  const carrier: Record<string, string> = {};
  injectTraceHeaders(carrier);
  const result = headers();
  for (const [name, value] of Object.entries(carrier)) result.set(name, value);
  return result;
}

function encode(data: unknown): Uint8Array {
  return encoder.encode(JSON.stringify(data === undefined ? null : data));
}
