import type { PresenceState } from '@gw/contracts';
import { isJidGroup, type BaileysEventMap, type WAMessage } from '../../baileys';
import { presenceEvent, type PresenceFacts } from '../event-payloads';
import { isLid, isPhoneJid, userJid } from '../identity-resolver';
import type { InboundContext } from './inbound-context';

/** Contacts whose presence one socket follows at most (a subscription is one stanza, the set bounds memory). */
const PRESENCE_SUBSCRIPTIONS = 5_000;
const PRESENCE_STATES = new Set<PresenceState>(['available', 'unavailable', 'composing', 'recording', 'paused']);

/** Presence of one socket: who it follows, and the `presence` events of what WhatsApp tells it. */
export class PresenceEvents {
  /** Contacts whose presence this socket asked for (presence is per connection). */
  private readonly presenceSubscribed = new Set<string>();
  /** Presence updates received and not yet written (one queued task writes them all). */
  private readonly pendingPresence: Array<BaileysEventMap['presence.update']> = [];

  constructor(private readonly context: InboundContext) {}

  /** Follows the presence of a contact the instance is talking with (WhatsApp sends it only to subscribers). */
  followPresence(message: WAMessage): void {
    const key = message.key;
    const remote = userJid(key?.remoteJid);
    if (!remote || (!isLid(remote) && !isPhoneJid(remote))) return;
    const alternate = userJid((key as { remoteJidAlt?: string }).remoteJidAlt);
    const target = isPhoneJid(remote) ? remote : alternate && isPhoneJid(alternate) ? alternate : remote;
    const me = this.context.identities.me();
    if (target === me.pn || target === me.lid || this.presenceSubscribed.has(target)) return;
    if (this.presenceSubscribed.size >= PRESENCE_SUBSCRIPTIONS) return;
    this.presenceSubscribed.add(target);
    this.context.socket.presenceSubscribe(target).catch((error: unknown) => {
      this.presenceSubscribed.delete(target);
      this.context.logger.debug({ err: error, jid: target }, 'presence subscription failed');
    });
  }

  /** Keeps an update for the next write; true when it is the first waiting (the caller queues the write then). */
  collect(update: BaileysEventMap['presence.update']): boolean {
    this.pendingPresence.push(update);
    return this.pendingPresence.length === 1;
  }

  /** Writes every update collected so far. */
  flush(): Promise<void> {
    return this.onPresence(this.pendingPresence.splice(0));
  }

  /** A contact online/offline, or typing/recording/paused in a chat: a `presence` event each. */
  private async onPresence(updates: Array<BaileysEventMap['presence.update']>): Promise<void> {
    const me = this.context.identities.me();
    const facts: PresenceFacts[] = [];
    for (const update of updates) {
      const chatJid = userJid(update.id) || update.id;
      if (!chatJid) continue;
      const isGroup = isJidGroup(chatJid) === true;
      for (const [participant, presence] of Object.entries(update.presences ?? {})) {
        const state = presence?.lastKnownPresence as PresenceState;
        if (!PRESENCE_STATES.has(state)) continue;
        const party = await this.context.identities.party(participant);
        if (!party.jid || (party.pn && party.pn === me.pn) || (party.lid && party.lid === me.lid)) continue;
        const lastSeen = typeof presence.lastSeen === 'number' && presence.lastSeen > 0 ? presence.lastSeen : null;
        facts.push({ chat: isGroup ? chatJid : party.pn || party.jid, isGroup, who: party, state, lastSeen });
      }
    }
    if (!facts.length) return;
    const who = await this.context.who();
    await this.context.withRetry('presence.update', { count: facts.length }, () =>
      this.context.write(async (_manager, events) => {
        for (const fact of facts) events.push(presenceEvent(fact, who));
      }),
    );
  }
}
