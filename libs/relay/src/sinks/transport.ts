import type { OutboxEvent, SinkKind, WebhookRow } from '@gw/persistence';
import { forEachAtMost } from '@gw/platform';

/** One event on its way to one target: the webhook envelope and its stable id. */
export interface SinkMessage {
  /** `evt_<outbox id>`: the same on every attempt (webhook-id, AMQP messageId, Nats-Msg-Id, Kafka header). */
  id: string;
  event: OutboxEvent;
  /** The webhook envelope (`BaseUrl` + the event's payload, the token when asked for) as JSON, exactly the bytes sent. */
  body: string;
}

/** What one attempt came to. A failure is recorded with its retry time; `gone` disables the target. */
export type SendOutcome =
  { ok: true; statusCode: number } | { ok: false; statusCode: number | null; error: string; retryAfterMs?: number | null; gone?: string; where?: string };

/**
 * How the relay reaches one kind of target. Fan-out, lanes, order, retries, disabling and the error
 * log are the relay's, the same for every kind; a transport only makes one attempt and says how it went
 * (it never throws for a failed attempt). It keeps whatever connections it needs between attempts.
 */
export interface SinkTransport {
  readonly kind: SinkKind;
  /**
   * Which receiver a target's deliveries queue at (requests in flight are bounded per receiver):
   * a webhook's URL origin, a broker's connection.
   */
  receiverKey(target: WebhookRow): string;
  /** Where an error record says the attempt went (credentials masked). */
  describe(target: WebhookRow, message: SinkMessage): string;
  send(target: WebhookRow, message: SinkMessage): Promise<SendOutcome>;
  /**
   * Before the relay's first claim: opens what the first attempt to each of `targets` (enabled targets of this kind)
   * would open, its connection and what a publication needs first (an exchange declared, a stream looked up or made),
   * as that attempt would. Publishes nothing. Answers how many targets are ready; one that cannot be made ready is
   * left to its first attempt, which tries again. Never throws. Absent: nothing to open ahead (a webhook's
   * connection is a customer's server, opened by its first request).
   */
  warmUp?(targets: WebhookRow[]): Promise<number>;
  /**
   * Closes at once the connections none of `inUse` (every enabled target of its kind) needs: a sink
   * deleted, disabled or moved elsewhere stops connecting to its broker. Absent: nothing is kept.
   */
  closeUnused?(inUse: WebhookRow[]): Promise<void>;
  close(): Promise<void>;
}

/** Brokers a transport's warmUp opens at once: a relay with many tenants' sinks does not dial them all in the same instant. */
const WARM_AT_ONCE = 8;

/**
 * A transport's warmUp over its targets: `warm` once for each distinct `key` (targets sharing a connection and what it
 * declares need it once), WARM_AT_ONCE at a time. Answers how many of the targets are ready; a `warm` that throws
 * leaves its own targets to their first attempt.
 */
export async function warmEach(targets: WebhookRow[], key: (target: WebhookRow) => string, warm: (target: WebhookRow) => Promise<void>): Promise<number> {
  const groups = new Map<string, { first: WebhookRow; count: number }>();
  for (const target of targets) {
    const group = groups.get(key(target));
    if (group) group.count++;
    else groups.set(key(target), { first: target, count: 1 });
  }
  let ready = 0;
  await forEachAtMost([...groups.values()], WARM_AT_ONCE, async ({ first, count }) => {
    const warmed = await warm(first).then(
      () => true,
      () => false,
    );
    if (warmed) ready += count;
  });
  return ready;
}

/** The error text of an error record: the code and message, never a stack. */
export function describeFailure(error: unknown): string {
  const err = error as { name?: string; code?: string | number; message?: string; cause?: { code?: string; message?: string } };
  if (err?.name === 'SsrfError' || err?.code === 'ESSRF' || err?.cause?.code === 'ESSRF')
    return `refused by the SSRF guard: ${err.cause?.message ?? err.message}`;
  if (err?.name === 'TimeoutError') return 'timed out';
  const message = (err?.message ?? String(error)).split('\n')[0];
  return err?.code !== undefined && !message.includes(String(err.code)) ? `${err.code}: ${message}` : message;
}

/** `{instance}` and `{event}` (and `{instanceName}`) of a routing key or subject template, made safe as one token each. */
export function fillTemplate(template: string, event: OutboxEvent, safe: (token: string) => string = (token) => token): string {
  // The payload is read (parsed, for a claimed event) only for a template that names `{instanceName}`.
  const instanceName = () => (typeof event.payload.instanceName === 'string' ? event.payload.instanceName : '');
  return template.replace(/\{(instanceName|instance|event)\}/g, (_match, name: string) =>
    safe(name === 'instance' ? event.instanceId : name === 'event' ? event.eventType : instanceName() || event.instanceId),
  );
}
