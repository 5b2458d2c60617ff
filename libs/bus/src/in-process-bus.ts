import { ErrorCode, RpcError } from '@gw/contracts';
import { metrics } from '@gw/platform';
import { Bus, type BusHandler, type BusSubscription, type RequestOptions, type SubscribeOptions, runHandler, subjectMatches, unwrapReply } from './bus';

interface Entry {
  pattern: string;
  handler: BusHandler;
  queue?: string;
}

/**
 * The embedded transport: same contract as NATS inside one process. Payloads go through a JSON round
 * trip so that nothing works here that would not survive the wire.
 */
export class InProcessBus extends Bus {
  private readonly entries = new Set<Entry>();
  private readonly queueCursor = new Map<string, number>();
  private closed = false;

  request<T>(subject: string, data: unknown, options: RequestOptions): Promise<T> {
    return metrics().timeBusRequest(subject, this.requestOnce<T>(subject, data, options));
  }

  private async requestOnce<T>(subject: string, data: unknown, options: RequestOptions): Promise<T> {
    this.assertOpen();
    const targets = this.pick(subject);
    if (targets.length === 0) throw new RpcError(ErrorCode.NoSession, `no responders for ${subject}`);
    const payload = wire(data);
    const target = targets[0];
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new RpcError(ErrorCode.Timeout, `request ${subject} timed out`)), options.timeoutMs);
    });
    try {
      const envelope = await Promise.race([runHandler(target.handler, payload, subject), timeout]);
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
    const entry: Entry = { pattern: subject, handler, queue: options.queue };
    this.entries.add(entry);
    return { unsubscribe: () => void this.entries.delete(entry) };
  }

  async ping(): Promise<void> {
    this.assertOpen();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.entries.clear();
  }

  /** Every plain subscriber, plus one member per queue group (round robin). */
  private pick(subject: string): Entry[] {
    const plain: Entry[] = [];
    const groups = new Map<string, Entry[]>();
    for (const entry of this.entries) {
      if (!subjectMatches(entry.pattern, subject)) continue;
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
