import type { Bus } from '@gw/bus';
import { Subjects, type ConnectionEventPayload, type OutboxNotice } from '@gw/contracts';
import type { InstanceEntity, InstancePatch, InstanceRepository, Lease } from '@gw/persistence';
import type { Logger } from '@gw/platform';

export interface StateChange {
  patch: InstancePatch;
  /** Write a `connection` event with this change (status changes, new QR or pairing code). */
  event?: { type?: 'LoggedOut' };
}

/**
 * Writes what the session holder learns about an instance: the row change and its `connection`
 * event in one fenced transaction (InstanceRepository.applySessionChange), then a wake-up notice on
 * the bus. A FencedOutError propagates: the caller must stop the session.
 */
export class SessionStateWriter {
  constructor(
    private readonly instances: InstanceRepository,
    private readonly bus: Bus,
    private readonly logger: Logger,
  ) {}

  async write(lease: Lease, current: InstanceEntity, change: StateChange): Promise<InstanceEntity> {
    const next = { ...current, ...change.patch } as InstanceEntity;
    const events = change.event ? [{ eventType: 'connection', payload: connectionEvent(next, change.patch, change.event.type) }] : [];
    const { entity, lastEventId } = await this.instances.applySessionChange(lease, change.patch, events);
    if (lastEventId !== null) this.notify({ instanceId: lease.instanceId, lastId: lastEventId });
    return entity;
  }

  /**
   * Ends a pairing whose worker died (nobody holds it, its QR/code expired): disconnected with the
   * same fields and event a live session writes on expiry. False when a worker claimed it meanwhile.
   */
  async expireAbandonedPairing(instanceId: string): Promise<boolean> {
    const result = await this.instances.applyToAbandonedPairing(instanceId, (current) => {
      const patch: InstancePatch = {
        status: 'disconnected',
        desiredState: 'disconnected',
        qrcode: '',
        paircode: '',
        pairingExpiresAt: null,
        lastDisconnect: new Date(),
        lastDisconnectReason: current.paircode ? 'pairing code expired' : 'QR code expired',
      };
      const next = { ...current, ...patch } as InstanceEntity;
      return { patch, events: [{ eventType: 'connection', payload: connectionEvent(next, patch) }] };
    });
    if (result?.lastEventId) this.notify({ instanceId, lastId: result.lastEventId });
    return result !== null;
  }

  private notify(notice: OutboxNotice): void {
    try {
      this.bus.publish(Subjects.outbox(notice.instanceId), notice);
    } catch (error) {
      // The event is in the outbox already; the relay's poll finds it without the notice.
      this.logger.warn({ err: error, instanceId: notice.instanceId }, 'outbox notice not published');
    }
  }
}

/** `2026-02-02 17:46:57.567Z`, the form the connection captures use. */
export function formatDisconnectTime(date: Date): string {
  return date.toISOString().replace('T', ' ');
}

/**
 * The `connection` event as the captures show it (BaseUrl and token are added at delivery):
 * QR/pairing code only while connecting; disconnect time and reason when this change set them.
 */
export function connectionEvent(entity: InstanceEntity, patch: InstancePatch, type?: 'LoggedOut'): ConnectionEventPayload {
  const instance: ConnectionEventPayload['instance'] = { name: entity.name, status: entity.status };
  if (entity.status === 'connecting' && entity.qrcode) instance.qrcode = entity.qrcode;
  if (entity.status === 'connecting' && entity.paircode) instance.paircode = entity.paircode;
  if (patch.lastDisconnect && entity.lastDisconnect) {
    instance.lastDisconnect = formatDisconnectTime(entity.lastDisconnect);
    instance.lastDisconnectReason = entity.lastDisconnectReason;
  }
  return { EventType: 'connection', instance, instanceName: entity.name, owner: entity.owner, ...(type ? { type } : {}) };
}
