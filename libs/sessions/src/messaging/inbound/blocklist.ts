import { ErrorCode, RpcError } from '@gw/contracts';
import { BlocklistRepository, type BlockChange, type Tx } from '@gw/persistence';
import type { BaileysEventMap } from '../../baileys';
import { blocksEvent } from '../event-payloads';
import { userJid } from '../identity-resolver';
import type { InboundContext } from './inbound-context';

/** The blocklist of one socket: changes made elsewhere, and the `/chat/blocklist` and `/chat/block` ops. */
export class BlocklistEvents {
  constructor(private readonly context: InboundContext) {}

  /** Blocked or unblocked elsewhere (the phone, another device): stored, and a `blocks` event. */
  async onBlocklistUpdate(update: BaileysEventMap['blocklist.update']): Promise<void> {
    const action = update.type === 'add' ? 'block' : 'unblock';
    const changes = await Promise.all((update.blocklist ?? []).map((jid) => this.blockChange(jid, action)));
    const valid = changes.filter((change) => change.jid);
    if (!valid.length) return;
    await this.context.withRetry('blocklist.update', { count: valid.length }, async () => {
      await this.writeBlocks((tx) => this.context.services.blocklist.within(tx).apply(this.context.instanceId, valid));
    });
  }

  private async blockChange(jid: string, action: BlockChange['action']): Promise<BlockChange> {
    const party = await this.context.identities.party(jid);
    return { jid: party.pn || party.jid, lid: party.lid, action };
  }

  /** One transaction: the blocklist changes, chats' `wa_isBlocked` follows, a `blocks` event if anything changed. */
  private async writeBlocks(apply: (tx: Tx) => Promise<BlockChange[]>): Promise<string[]> {
    const who = await this.context.who();
    return this.context.write(async (tx, events) => {
      const applied = await apply(tx);
      const list = (await this.context.services.blocklist.within(tx).list(this.context.instanceId)).map((entry) => entry.jid);
      if (applied.length) events.push(blocksEvent(applied, list, who));
      return list;
    });
  }

  /** `GET /chat/blocklist`: WhatsApp's list; the stored one is made equal to it (differences announced). */
  async syncBlocklist(): Promise<string[]> {
    return this.applyBlocklist(await this.context.socket.fetchBlocklist());
  }

  /**
   * WhatsApp's list as it answered (`GET /chat/blocklist`, or the login's own query, which Baileys hands over as
   * `blocklist.set`): the stored one is made equal to it, differences announced.
   */
  async applyBlocklist(jids: Array<string | undefined>): Promise<string[]> {
    const current = await Promise.all(
      jids.filter((jid): jid is string => typeof jid === 'string' && jid.length > 0).map((jid) => this.blockChange(jid, 'block')),
    );
    return this.context.run(async () => {
      // At every login (issue #38): nearly always nothing changed while the instance was away. The
      // stored list (a serial task: this socket's earlier writes have committed) answers then, with no
      // transaction and no event; else the change is written as before (read again inside it).
      const stored = await this.context.services.blocklist.list(this.context.instanceId);
      if (BlocklistRepository.differences(stored, current).length === 0) return stored.map((entry) => entry.jid);
      return this.writeBlocks((tx) => this.context.services.blocklist.within(tx).replace(this.context.instanceId, current));
    });
  }

  /** `POST /chat/block`: asks WhatsApp, then stores the change (a later notification of it changes nothing). */
  async setBlocked(jid: string, block: boolean): Promise<string[]> {
    const socket = this.context.socket;
    const action = block ? 'block' : 'unblock';
    const change = await this.blockChange(jid, action);
    try {
      await socket.updateBlockStatus(change.jid, action);
    } catch (error) {
      if (!isUnresolved(error)) throw error;
      // Baileys blocks by LID: learn the contact's LID from WhatsApp first.
      const [found] = (await socket.onWhatsApp(change.jid).catch(() => undefined)) ?? [];
      const lid = (found as { lid?: string } | undefined)?.lid;
      if (!found?.exists || !lid) throw new RpcError(ErrorCode.NotFound, 'Contact not found on WhatsApp');
      await socket.signalRepository.lidMapping.storeLIDPNMappings([{ lid: userJid(lid), pn: change.jid }]);
      await socket.updateBlockStatus(change.jid, action);
      change.lid = userJid(lid);
    }
    return this.context.run(() => this.writeBlocks((tx) => this.context.services.blocklist.within(tx).apply(this.context.instanceId, [change])));
  }
}

/** Baileys could not map the contact between phone number and LID (it blocks by LID). */
function isUnresolved(error: unknown): boolean {
  return /Unable to resolve/i.test((error as Error)?.message ?? '');
}
