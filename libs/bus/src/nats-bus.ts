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
const decoder = new TextDecoder();

/** The bus over core NATS: request/reply for commands, plain publish for notifications. */
export class NatsBus extends Bus {
  private constructor(
    private readonly connection: NatsConnection,
    /** Whose spans this connection's requests and handlers make (tracing on). */
    private readonly service: TracedService,
  ) {
    super();
  }

  /** `name`: the connection's name at the server; it also says whose spans the bus makes (serviceOfConnection). */
  static async connect(url: string, name: string): Promise<NatsBus> {
    // noAsyncTraces: without it the client builds an Error (a captured stack) at the start of every
    // request and every timed subscription, in case it fails: bench/send's gateway profile showed the
    // RequestError constructor as the client's largest self time. The errors we map below keep their
    // classes and causes; only the caller's stack is not attached. Every server of the URL (a cluster's),
    // its credentials as options (natsServerOptions), reconnecting for ever: a lost server is left for another.
    const connection = await connect({ ...natsServerOptions(url), name, maxReconnectAttempts: -1, reconnectTimeWait: 500, noAsyncTraces: true });
    return new NatsBus(connection, serviceOfConnection(name));
  }

  request<T>(subject: string, data: unknown, options: RequestOptions): Promise<T> {
    // Traced: a client span, its context in the message's `traceparent` header (W3C), continued by the handler.
    if (tracingEnabled())
      return tracedRequest(this.service, 'nats', subject, () => metrics().timeBusRequest(subject, this.requestOnce<T>(subject, data, options, traceHeaders())));
    return metrics().timeBusRequest(subject, this.requestOnce<T>(subject, data, options));
  }

  private async requestOnce<T>(subject: string, data: unknown, options: RequestOptions, traced?: MsgHdrs): Promise<T> {
    try {
      const message = await this.connection.request(subject, encode(data), { timeout: options.timeoutMs, ...(traced ? { headers: traced } : {}) });
      return unwrapReply<T>(JSON.parse(decoder.decode(message.data)));
    } catch (error) {
      if (error instanceof RpcError) throw error;
      if (error instanceof NoRespondersError || (error instanceof RequestError && error.isNoResponders())) {
        throw new RpcError(ErrorCode.NoSession, `no responders for ${subject}`);
      }
      if (error instanceof TimeoutError || (error instanceof RequestError && error.cause instanceof TimeoutError)) {
        throw new RpcError(ErrorCode.Timeout, `request ${subject} timed out`);
      }
      throw new RpcError(ErrorCode.Internal, `bus request failed: ${(error as Error).message}`);
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
        void run.then((envelope) => {
          if (message.reply) message.respond(encode(envelope));
        });
      },
    });
    return { unsubscribe: () => subscription.unsubscribe() };
  }

  async ping(): Promise<void> {
    await this.connection.flush();
  }

  async close(): Promise<void> {
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
