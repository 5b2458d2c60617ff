import type { WebhookRow } from '@gw/persistence';
import { guardedConnector, injectTraceHeaders, metrics, SsrfError, type SsrfGuard } from '@gw/platform';
import { Agent, type Dispatcher } from 'undici';
import { parseRetryAfter } from '../retry-schedule';
import { signWebhook } from '../signature';
import { deliveryUrl } from '../webhook-filter';
import type { SendOutcome, SinkMessage, SinkTransport } from './transport';

/** Webhooks: one signed POST (Standard Webhooks headers) per attempt; a 2xx delivers, 410 Gone disables. */
export class HttpTransport implements SinkTransport {
  readonly kind = 'webhook' as const;
  private readonly agent: Agent;
  /**
   * Each delivery URL's form check (SsrfGuard.checkUrlForm) and its origin and path, by URL: the same
   * few URLs come back on every delivery, and parsing each again (here, then in undici) cost the relay
   * two URL parses a request. Refusals are kept too: the same URL is refused the same way.
   */
  private readonly forms = new Map<string, UrlForm | SsrfError>();

  constructor(private readonly options: { ssrf: SsrfGuard; requestTimeoutMs: number }) {
    this.agent = new Agent({ connect: guardedConnector(options.ssrf, { timeout: options.requestTimeoutMs }), keepAliveTimeout: 10_000 });
  }

  receiverKey(target: WebhookRow): string {
    return originOf(target.url);
  }

  describe(target: WebhookRow, message: SinkMessage): string {
    // The payload is read (parsed, for a claimed event) only when the URL takes its message type.
    if (!target.addUrlEvents && !target.addUrlTypesMessages) return target.url;
    return deliveryUrl(target, message.event.eventType, message.event.payload);
  }

  async send(target: WebhookRow, message: SinkMessage): Promise<SendOutcome> {
    const url = this.describe(target, message);
    const headers = signWebhook(target.secret, message.id, Math.floor(Date.now() / 1000), message.body);
    // Tracing on: `traceparent` (W3C) names the relay's delivery span, so the receiver can continue the trace.
    injectTraceHeaders(headers);
    const started = performance.now();
    try {
      // The URL's form here (http(s), a host, no credentials); its addresses when a connection is opened
      // (guardedConnector: a name through the guarded lookup, a literal address there too), so that a
      // delivery over a kept-alive connection costs no DNS lookup of its own (it cost one per request).
      const { origin, path } = this.formOf(url);
      const answer = await post(
        this.agent,
        {
          origin,
          path,
          method: 'POST',
          body: message.body,
          headers: { ...headers, 'content-type': 'application/json', 'user-agent': 'wa-gateway-webhooks/1' },
          headersTimeout: this.options.requestTimeoutMs,
          bodyTimeout: this.options.requestTimeoutMs,
        },
        this.options.requestTimeoutMs,
      );
      const statusCode = answer.statusCode;
      metrics().recordWebhookDelivery(statusCode, (performance.now() - started) / 1000);
      if (statusCode >= 200 && statusCode < 300) return { ok: true, statusCode };
      return {
        ok: false,
        statusCode,
        error: `receiver answered ${statusCode}`,
        retryAfterMs: parseRetryAfter(answer.retryAfter),
        ...(statusCode === 410 ? { gone: '410 Gone from the receiver' } : {}),
      };
    } catch (caught) {
      metrics().recordWebhookDelivery(null, (performance.now() - started) / 1000);
      return { ok: false, statusCode: null, error: describeError(caught) };
    }
  }

  async close(): Promise<void> {
    await this.agent.close().catch(() => undefined);
  }

  /** The URL's form, checked (throws the guard's refusal); remembered per URL. */
  private formOf(url: string): UrlForm {
    let form = this.forms.get(url);
    if (form === undefined) {
      try {
        const parsed = this.options.ssrf.checkUrlForm(url);
        form = { origin: parsed.origin, path: `${parsed.pathname}${parsed.search}` };
      } catch (error) {
        if (!(error instanceof SsrfError)) throw error;
        form = error;
      }
      if (this.forms.size >= MAX_REMEMBERED_URLS) this.forms.clear();
      this.forms.set(url, form);
    }
    if (form instanceof SsrfError) throw form;
    return form;
  }
}

interface UrlForm {
  origin: string;
  /** Path and query (a fragment is never sent). */
  path: string;
}

/** URLs whose form (and origin) are remembered: far more than the webhooks a relay serves; all forgotten past it. */
const MAX_REMEMBERED_URLS = 10_000;

const origins = new Map<string, string>();

/** What a POST came to: the final status and, for a refusal, its `Retry-After`. */
interface Answer {
  statusCode: number;
  retryAfter?: string;
}

/**
 * One request through undici's dispatcher, its response body read and dropped (so the connection is
 * reused), within `deadlineMs` for the whole of it (connect, headers, body). Not `agent.request` with an
 * AbortSignal: the AbortController, the signal's listener and the response's body stream cost 25-35 µs
 * of CPU a request against this handler's own timer (20,000 POSTs at 8 in flight to a loopback
 * receiver: 58-69 µs against 34 µs, issue #38), in a relay whose CPU per delivery was twice the bare
 * client's (bench/webhooks). A deadline that passes before the request has its connection rejects at
 * once; the request is then aborted as soon as undici hands it a connection, before anything is written.
 */
function post(agent: Agent, options: Dispatcher.DispatchOptions, deadlineMs: number): Promise<Answer> {
  return new Promise<Answer>((resolve, reject) => {
    let abort: ((reason?: Error) => void) | undefined;
    let timedOut: Error | undefined;
    let answer: Answer | undefined;
    let settled = false;
    const settle = (error: Error | undefined, value?: Answer) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (error) reject(error);
      else resolve(value as Answer);
    };
    const timer = setTimeout(() => {
      timedOut = new DOMException('The operation was aborted due to timeout', 'TimeoutError') as Error;
      abort?.(timedOut);
      settle(timedOut);
    }, deadlineMs);
    timer.unref();
    const handler: Dispatcher.DispatchHandler = {
      onConnect(abortRequest) {
        if (timedOut) return abortRequest(timedOut);
        abort = abortRequest;
      },
      onHeaders(statusCode, rawHeaders) {
        // 1xx: informational, the answer is still to come.
        if (statusCode < 200) return true;
        answer = statusCode >= 300 ? { statusCode, retryAfter: headerOf(rawHeaders, 'retry-after') } : { statusCode };
        return true;
      },
      onData: () => true,
      onComplete: () => settle(answer ? undefined : new Error('the receiver answered nothing'), answer),
      onError: (error: Error) => settle(error),
    };
    agent.dispatch(options, handler);
  });
}

/** The first value of header `name` (lower case) in undici's raw headers (name, value, name, value…). */
function headerOf(rawHeaders: Buffer[], name: string): string | undefined {
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    if (rawHeaders[i].length === name.length && rawHeaders[i].toString('latin1').toLowerCase() === name) return rawHeaders[i + 1].toString('latin1');
  }
  return undefined;
}

/** A URL's origin (the URL itself when it does not parse); remembered per URL: the relay asks for it on every delivery. */
export function originOf(url: string): string {
  let origin = origins.get(url);
  if (origin === undefined) {
    try {
      origin = new URL(url).origin;
    } catch {
      origin = url;
    }
    if (origins.size >= MAX_REMEMBERED_URLS) origins.clear();
    origins.set(url, origin);
  }
  return origin;
}

function describeError(error: unknown): string {
  if (error instanceof SsrfError) return `refused by the SSRF guard: ${error.message}`;
  const err = error as { name?: string; code?: string; message?: string; cause?: { code?: string; message?: string } };
  if (err?.name === 'TimeoutError' || err?.code === 'UND_ERR_HEADERS_TIMEOUT' || err?.code === 'UND_ERR_CONNECT_TIMEOUT') return 'timed out';
  if (err?.cause?.code === 'ESSRF' || err?.code === 'ESSRF') return `refused by the SSRF guard: ${err.cause?.message ?? err.message}`;
  return err?.code ? `${err.code}: ${err.message ?? ''}`.trim() : (err?.message ?? 'request failed');
}
