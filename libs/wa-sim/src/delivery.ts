// Delivery of a stanza to a device: an in-process phone, or a companion (now if it is online and active,
// else kept in its pending queue until it is), with the delivery faults (drop-deliveries, corrupt,
// undecryptable) applied on the way.
import { deviceRefKey } from './accounts';
import type { Account, DeviceRef, LinkedDevice } from './accounts';
import type { FaultController } from './faults';
import type { Logger } from './logger';
import type { BinaryNode } from './node-io';
import type { PhoneAgent } from './phone';
import { UndecryptableDeliveries } from './undecryptable';

const PENDING_LIMIT = 5_000;

/** What delivery needs from the simulator. */
export interface DeliveryDeps {
  readonly faults: FaultController;
  readonly logger: Logger;
  matchesDevice(filter: string, ref: DeviceRef): boolean;
  phoneOf(account: Account): PhoneAgent;
}

export class Delivery {
  private readonly undecryptable = new UndecryptableDeliveries();

  constructor(private readonly sim: DeliveryDeps) {}

  /** Delivers a stanza to any device: a companion socket or an in-process phone. */
  deliver(target: DeviceRef, stanza: BinaryNode, sender?: DeviceRef): void {
    if (this.sim.faults.take('drop-deliveries', (f) => this.sim.matchesDevice(f, target))) {
      this.sim.logger.debug({ target: deviceRefKey(target), id: stanza.attrs.id }, 'fault: delivery dropped');
      return;
    }
    if (stanza.tag === 'message' && this.sim.faults.take('corrupt', (f) => this.sim.matchesDevice(f, target))) {
      stanza = corruptEnc(stanza);
    }
    stanza = this.undecryptable.apply(target, stanza, () => this.sim.faults.take('undecryptable', (f) => this.sim.matchesDevice(f, target)));
    if (target.deviceId === 0) {
      this.sim.phoneOf(target.account).onStanza(stanza, sender);
      return;
    }
    const device = target.account.devices.get(target.deviceId);
    if (device) this.toCompanion(device, stanza);
  }

  /** Pushes a stanza to a companion now, or keeps it until the companion is online and active. */
  toCompanion(device: LinkedDevice, stanza: BinaryNode): void {
    if (device.status !== 'active') return;
    const key = `${stanza.tag}:${stanza.attrs.id}:${stanza.attrs.type ?? ''}`;
    device.pending.delete(key);
    device.pending.set(key, stanza);
    if (device.pending.size > PENDING_LIMIT) {
      const oldest = device.pending.keys().next().value;
      if (oldest !== undefined) device.pending.delete(oldest);
    }
    const connection = device.connection;
    if (connection?.isTransportReady && connection.active) connection.sendNode(stanza);
  }
}

/** Flips bytes inside every `<enc>` so the recipient fails to decrypt and asks for a retry. */
function corruptEnc(stanza: BinaryNode): BinaryNode {
  if (!Array.isArray(stanza.content)) return stanza;
  return {
    ...stanza,
    content: stanza.content.map((c) => {
      if (c.tag !== 'enc' || !(c.content instanceof Uint8Array)) return c;
      const bytes = Buffer.from(c.content);
      for (let i = Math.floor(bytes.length / 2); i < bytes.length; i++) bytes[i] ^= 0x5a;
      return { ...c, content: bytes };
    }),
  };
}
