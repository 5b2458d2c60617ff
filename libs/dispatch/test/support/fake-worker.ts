import type { Bus, BusSubscription } from '@gw/bus';
import { ErrorCode, RpcError, Subjects, type SendRequest } from '@gw/contracts';
import type { DataSource } from 'typeorm';

export interface FakeCall {
  instanceId: string;
  messageId: string;
  text: string;
  at: number;
  doneAt?: number;
}

/**
 * Stands in for the session worker on `instance.<id>.send`: relays at most once per messageId (a
 * relayed id is answered from the store, as the real worker does), stores Sent, and records every
 * call and relay so tests can count duplicates and measure gaps.
 */
export class FakeWorker {
  readonly calls: FakeCall[] = [];
  readonly relays = new Map<string, number>();
  readonly relayOrder = new Map<string, string[]>();
  readonly maxConcurrent = new Map<string, number>();
  private readonly inFlight = new Map<string, number>();
  private readonly subscriptions = new Map<string, BusSubscription>();
  connected = true;
  workMs = 0;
  /** Answer later than this (ms) for the first call of a messageId (to cause a dispatcher timeout). */
  firstAnswerDelayMs = 0;
  /** Throw this on every call (after the connected check). */
  failWith: RpcError | null = null;

  constructor(
    private readonly bus: Bus,
    private readonly dataSource: DataSource,
  ) {}

  serve(instanceId: string): void {
    const send = this.bus.subscribe(Subjects.instance(instanceId, 'send'), (data) => this.handle(data as SendRequest));
    // A real holder answers the dispatcher's holder check from memory, even while busy with a send.
    const status = this.bus.subscribe(Subjects.instance(instanceId, 'status'), async () => ({ instanceId, connected: true }));
    this.subscriptions.set(instanceId, {
      unsubscribe: () => {
        send.unsubscribe();
        status.unsubscribe();
      },
      drain: async () => {
        await Promise.all([send.drain(), status.drain()]);
      },
    });
  }

  /** No subscriber: the bus answers NoSession, as when no worker holds the instance. */
  unserve(instanceId: string): void {
    this.subscriptions.get(instanceId)?.unsubscribe();
    this.subscriptions.delete(instanceId);
  }

  relayCount(messageId: string): number {
    return this.relays.get(messageId) ?? 0;
  }

  private async handle(request: SendRequest): Promise<unknown> {
    const call: FakeCall = {
      instanceId: request.instanceId,
      messageId: request.messageId,
      text: request.content.kind === 'text' ? request.content.text : '',
      at: Date.now(),
    };
    this.calls.push(call);
    const current = (this.inFlight.get(request.instanceId) ?? 0) + 1;
    this.inFlight.set(request.instanceId, current);
    this.maxConcurrent.set(request.instanceId, Math.max(this.maxConcurrent.get(request.instanceId) ?? 0, current));
    try {
      if (!this.connected) throw new RpcError(ErrorCode.NotConnected, 'instance is not connected');
      if (this.failWith) throw this.failWith;
      const first = !this.relays.has(request.messageId);
      if (first) {
        this.relays.set(request.messageId, 1);
        this.relayOrder.set(request.instanceId, [...(this.relayOrder.get(request.instanceId) ?? []), request.messageId]);
        await this.dataSource.query(`UPDATE messages SET status = 'Sent', relayed_at = now(), text = $3 WHERE instance_id = $1 AND message_id = $2`, [
          request.instanceId,
          request.messageId,
          call.text,
        ]);
        if (this.workMs) await sleep(this.workMs);
        if (this.firstAnswerDelayMs) await sleep(this.firstAnswerDelayMs);
      }
      const rows: Array<Record<string, unknown>> = await this.dataSource.query(
        `SELECT id, message_id, status FROM messages WHERE instance_id = $1 AND message_id = $2`,
        [request.instanceId, request.messageId],
      );
      return { id: rows[0]?.id, messageid: request.messageId, status: rows[0]?.status };
    } finally {
      this.inFlight.set(request.instanceId, (this.inFlight.get(request.instanceId) ?? 1) - 1);
      call.doneAt = Date.now();
    }
  }

  close(): void {
    for (const subscription of this.subscriptions.values()) subscription.unsubscribe();
    this.subscriptions.clear();
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(20);
  }
}
