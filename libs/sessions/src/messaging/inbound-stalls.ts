import type { Logger } from '@gw/platform';
import type { StallListener } from './inbound-store-options';

/**
 * Which instances' inbound writes meet no database (issue #39), and who is told when that changes:
 * their sockets are not read meanwhile (InboundSocketHandler holds its SocketReader).
 */
export class InboundStalls {
  /** Instances whose last write met no database (their sockets are not read meanwhile). */
  private readonly stalled = new Set<string>();
  private readonly listeners = new Map<string, Set<StallListener>>();

  constructor(private readonly logger: Logger) {}

  /** See InboundStore.watch. */
  watch(instanceId: string, listener: StallListener): () => void {
    let listeners = this.listeners.get(instanceId);
    if (!listeners) this.listeners.set(instanceId, (listeners = new Set()));
    listeners.add(listener);
    if (this.stalled.has(instanceId)) listener(true);
    return () => {
      listeners.delete(listener);
      if (listeners.size === 0 && this.listeners.get(instanceId) === listeners) this.listeners.delete(instanceId);
    };
  }

  has(instanceId: string): boolean {
    return this.stalled.has(instanceId);
  }

  /** Records whether the instance's last write met no database; its listeners hear of a change only. */
  set(instanceId: string, stalled: boolean): void {
    if (this.stalled.has(instanceId) === stalled) return;
    if (stalled) this.stalled.add(instanceId);
    else this.stalled.delete(instanceId);
    this.logger[stalled ? 'warn' : 'info'](
      { instanceId },
      stalled ? 'inbound writes meet no database: socket not read, writes kept and retried' : 'inbound writes reach the database again',
    );
    for (const listener of [...(this.listeners.get(instanceId) ?? [])]) {
      try {
        listener(stalled);
      } catch (error) {
        this.logger.warn({ err: error, instanceId }, 'a stall listener failed');
      }
    }
  }
}
