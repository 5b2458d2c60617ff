// The stanzas a logged-in companion sends, each to the part that handles it: iqs to the iq router,
// messages (with the ack faults and the send limits) and receipts to the message router, presence and
// chat states to the group store, calls to the call center.
import type { AccountRegistry, DeviceRef } from './accounts';
import type { CallCenter } from './calls';
import type { Connection } from './connection';
import type { FaultController } from './faults';
import type { GroupStore } from './groups';
import type { IqRouter } from './iq-router';
import type { MessageRouter } from './message-router';
import type { BinaryNode } from './node-io';
import { node, unixNow } from './node-io';
import type { PrivacyTokens } from './privacy-tokens';
import type { SendLimits } from './send-limits';

/** What the stanza dispatch needs from the simulator. */
export interface StanzaDeps {
  readonly registry: AccountRegistry;
  readonly faults: FaultController;
  readonly sendLimits: SendLimits;
  readonly router: MessageRouter;
  readonly privacyTokens: PrivacyTokens;
  readonly groups: GroupStore;
  readonly calls: CallCenter;
  matchesDevice(filter: string, ref: DeviceRef): boolean;
}

export class StanzaDispatch {
  constructor(
    private readonly sim: StanzaDeps,
    private readonly iqRouter: IqRouter,
  ) {}

  async handle(connection: Connection, stanza: BinaryNode): Promise<void> {
    const device = connection.deviceJid ? this.sim.registry.findDevice(connection.deviceJid) : undefined;
    const ref: DeviceRef | undefined = device ? { account: device.account, deviceId: device.deviceId } : undefined;
    switch (stanza.tag) {
      case 'iq':
        if (stanza.attrs.type === 'get' || stanza.attrs.type === 'set') {
          await this.iqRouter.handle(connection, stanza, device);
        }
        return;
      case 'message': {
        if (!ref || !device) return;
        const ackRule = this.sim.faults.take('ack', (f) => this.sim.matchesDevice(f, ref));
        if (ackRule?.mode === 'lost') {
          connection.destroy();
          return;
        }
        const refusal = ackRule?.mode === 'error' ? (ackRule.error ?? '463') : this.sim.sendLimits.refusal(ref, stanza);
        if (refusal) {
          connection.sendNode(node('ack', { class: 'message', id: stanza.attrs.id, from: stanza.attrs.to, t: String(unixNow()), error: refusal }));
          return;
        }
        const ack = this.sim.router.onMessage(ref, stanza);
        if (ack && !ack.attrs.error) this.sim.privacyTokens.note(ref.account, stanza);
        if (!ack || ackRule?.mode === 'drop') return;
        if (ackRule?.mode === 'delay') {
          setTimeout(() => connection.sendNode(ack), ackRule.delayMs ?? 5_000);
        } else {
          connection.sendNode(ack);
        }
        return;
      }
      case 'receipt':
        if (!ref) return;
        this.sim.router.onReceipt(ref, stanza);
        connection.sendNode(node('ack', { class: 'receipt', id: stanza.attrs.id, from: stanza.attrs.to, type: stanza.attrs.type }));
        return;
      case 'ack':
        if (ref) this.sim.router.onAck(ref, stanza);
        return;
      case 'presence':
      case 'chatstate':
        if (ref) this.sim.groups.onPresence(ref, stanza);
        return;
      case 'call':
        if (!ref) return;
        this.sim.calls.onDeviceCall(ref, stanza);
        connection.sendNode(node('ack', { class: 'call', id: stanza.attrs.id, from: stanza.attrs.to }));
        return;
      default:
        // ib (unified_session, offline_batch) and anything else needs no answer.
        return;
    }
  }
}
