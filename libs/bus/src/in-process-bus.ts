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
  subjectMatches,
  tracedRequest,
  unwrapReply,
} from './bus';

interface Entry {
  pattern: string;
  handler: BusHandler;
  queue?: string;
  /** Order of subscription: matches are answered in it, as when every subscription was scanned. */
  seq: number;
}

/**
 * The subscriptions, found by their subjects' first two tokens.
 *
 * Why: every publish and request scanned every subscription. A worker subscribes `instance.<id>.>` for
 * each instance it holds, so in the embedded default each message cost a scan of them all: at 1,000
 * instances ~4 % of the worker's CPU while they connected (bench/instances, issue #38). A pattern whose
 * first two tokens are literal can only match subjects that start with them, and is kept under them;
 * the others (`events.*`, `queue.*`, a one-token subject) are few and are checked for every subject.
 */
class Subscriptions {
  private readonly byPrefix = new Map<string, Set<Entry>>();
  private readonly others = new Set<Entry>();

  add(entry: Entry): void {
    const key = prefixOf(entry.pattern);
    if (key === null) this.others.add(entry);
    else {
      const bucket = this.byPrefix.get(key) ?? new Set<Entry>();
      bucket.add(entry);
      this.byPrefix.set(key, bucket);
    }
  }

  delete(entry: Entry): void {
    const key = prefixOf(entry.pattern);
    if (key === null) return void this.others.delete(entry);
    const bucket = this.byPrefix.get(key);
    bucket?.delete(entry);
    if (bucket?.size === 0) this.byPrefix.delete(key);
  }

  clear(): void {
    this.byPrefix.clear();
    this.others.clear();
  }

  /** The subscriptions matching `subject`, in the order they were made. */
  matching(subject: string): Entry[] {
    const found: Entry[] = [];
    const key = prefixOf(subject);
    for (const entry of key === null ? [] : (this.byPrefix.get(key) ?? [])) if (subjectMatches(entry.pattern, subject)) found.push(entry);
    for (const entry of this.others) if (subjectMatches(entry.pattern, subject)) found.push(entry);
    return found.length > 1 ? found.sort((a, b) => a.seq - b.seq) : found;
  }
}

/** A subject's or pattern's first two tokens, when it has at least two and neither is a wildcard. */
function prefixOf(subject: string): string | null {
  const first = subject.indexOf('.');
  if (first < 0) return null;
  const second = subject.indexOf('.', first + 1);
  const head = second < 0 ? subject : subject.slice(0, second);
  const [a, b] = [head.slice(0, first), head.slice(first + 1)];
  return a === '*' || a === '>' || b === '*' || b === '>' ? null : head;
}

/**
 * The embedded transport: same contract as NATS inside one process. Payloads go through a JSON round
 * trip so that nothing works here that would not survive the wire.
 */
export class InProcessBus extends Bus {
  private readonly entries = new Subscriptions();
  private nextSeq = 0;
  private readonly queueCursor = new Map<string, number>();
  private closed = false;

  /** `service`: whose spans the bus makes (tracing on); the embedded default's bus is the gateway process's. */
  constructor(private readonly service: TracedService = 'gateway') {
    super();
  }

  request<T>(subject: string, data: unknown, options: RequestOptions): Promise<T> {
    // Traced as over NATS: a client span, its `traceparent` carried beside the payload, a server span continuing it.
    if (tracingEnabled())
      return tracedRequest(this.service, 'in-process', subject, () => metrics().timeBusRequest(subject, this.requestOnce<T>(subject, data, options)));
    return metrics().timeBusRequest(subject, this.requestOnce<T>(subject, data, options));
  }

  private async requestOnce<T>(subject: string, data: unknown, options: RequestOptions): Promise<T> {
    this.assertOpen();
    const targets = this.pick(subject);
    if (targets.length === 0) throw new RpcError(ErrorCode.NoSession, `no responders for ${subject}`, { notRun: true });
    const payload = wire(data);
    const target = targets[0];
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new RpcError(ErrorCode.Timeout, `request ${subject} timed out`)), options.timeoutMs);
    });
    try {
      const envelope = await Promise.race([this.run(target.handler, payload, subject), timeout]);
      return unwrapReply<T>(wire(envelope));
    } finally {
      clearTimeout(timer);
    }
  }

  publish(subject: string, data: unknown): void {
    this.assertOpen();
    const payload = wire(data);
    for (const target of this.pick(subject)) {
      // Delivered on a later tick, like a network hop; handler failures stay with the subscriber.
      setImmediate(() => void runHandler(target.handler, payload, subject));
    }
  }

  subscribe(subject: string, handler: BusHandler, options: SubscribeOptions = {}): BusSubscription {
    this.assertOpen();
    const entry: Entry = { pattern: subject, handler, queue: options.queue, seq: this.nextSeq++ };
    this.entries.add(entry);
    // Delivery is immediate here: nothing is ever routed to a subscriber and not yet handled.
    return { unsubscribe: () => void this.entries.delete(entry), drain: async () => void this.entries.delete(entry) };
  }

  async ping(): Promise<void> {
    this.assertOpen();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.entries.clear();
  }

  /** The handler, in a server span that continues the request's `traceparent` when tracing is on. */
  private run(handler: BusHandler, payload: unknown, subject: string) {
    if (!tracingEnabled()) return runHandler(handler, payload, subject);
    const carrier: Record<string, string> = {};
    injectTraceHeaders(carrier);
    return runTracedHandler(this.service, 'in-process', extractTraceContext({ get: (name) => carrier[name] }), handler, payload, subject);
  }

  /** Every plain subscriber, plus one member per queue group (round robin). */
  private pick(subject: string): Entry[] {
    const plain: Entry[] = [];
    const groups = new Map<string, Entry[]>();
    for (const entry of this.entries.matching(subject)) {
      if (entry.queue) {
        const key = `${entry.pattern}|${entry.queue}`;
        groups.set(key, [...(groups.get(key) ?? []), entry]);
      } else plain.push(entry);
    }
    for (const [key, members] of groups) {
      const cursor = this.queueCursor.get(key) ?? 0;
      this.queueCursor.set(key, cursor + 1);
      plain.push(members[cursor % members.length]);
    }
    return plain;
  }

  private assertOpen(): void {
    if (this.closed) throw new RpcError(ErrorCode.Internal, 'bus closed');
  }
}

function wire(data: unknown): unknown {
  return data === undefined ? null : JSON.parse(JSON.stringify(data));
}
