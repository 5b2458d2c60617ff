// The in-process API over what an account's phone holds and changes: its archive and history, status
// privacy, automatic receipts, blocklist, app state (chats, address book, notes), profile picture, inbox,
// outbox and receipts, and its privacy tokens. Reached as WaSimulator.phoneState (the control API's
// /accounts/:phone/… routes).
import { proto } from './baileys';
import type { ChatModification } from './baileys';
import { digitsOnly } from './accounts';
import type { Account, AccountRegistry, InboxEntry, OutboxEntry, ReceiptType } from './accounts';
import { addressBookOf, APP_STATE_COLLECTIONS, decodeAppState, phoneChats, phonePatch } from './app-state';
import type { AddressBookEntry, DecodedMutation, PhoneChat } from './app-state';
import { SimError } from './errors';
import { phoneNotes, phoneWriteNote, type PhoneNote } from './notes';
import type { PhoneAgent } from './phone';
import type { PeerRequestRecord } from './phone-peer-data';
import type { PrivacyTokens, TokenView } from './privacy-tokens';
import type { ProfilePicture, ProfileStore } from './profile';
import { requireAccount, type InboxQuery } from './simulator-api-types';
import type { SimulatorIqHooks } from './simulator-iq-hooks';

/** What the phone-state API needs from the simulator. */
export interface PhoneStateDeps {
  readonly registry: AccountRegistry;
  readonly profiles: ProfileStore;
  readonly privacyTokens: PrivacyTokens;
  phoneOf(account: Account): PhoneAgent;
  stateChanged(): void;
}

export class PhoneStateApi {
  constructor(
    private readonly sim: PhoneStateDeps,
    /** Tells the account's devices what changed (server_sync, account_sync). */
    private readonly notify: Pick<SimulatorIqHooks, 'announceAppState' | 'blocklistChanged'>,
  ) {}

  /** Messages (WebMessageInfo JSON) the phone keeps for on-demand history and placeholder resends. */
  archiveMessages(phone: string, messages: unknown): number {
    if (!Array.isArray(messages) || messages.some((entry) => !entry || typeof entry !== 'object'))
      throw new SimError(400, 'messages must be an array of WebMessageInfo objects');
    const archived = this.sim.phoneOf(this.account(phone)).archiveMessages(messages as Array<Record<string, unknown>>);
    this.sim.stateChanged();
    return archived;
  }

  /** Peer data operation requests (history on demand, placeholder resends) the phone received. */
  peerRequests(phone: string): PeerRequestRecord[] {
    return this.sim.phoneOf(this.account(phone)).peerRequests();
  }

  /** Sets the history the phone pushes to companions paired from now on (HistorySync JSON objects). */
  setHistory(phone: string, history: Array<Record<string, unknown>> | undefined): void {
    const account = this.account(phone);
    if (history !== undefined && !Array.isArray(history)) throw new SimError(400, 'history must be an array of HistorySync objects');
    for (const chunk of history ?? []) {
      try {
        proto.HistorySync.encode(proto.HistorySync.fromObject(chunk)).finish();
      } catch (err) {
        throw new SimError(400, `invalid HistorySync: ${(err as Error).message}`);
      }
    }
    account.history = history;
    this.sim.stateChanged();
  }

  /** Sets who sees the account's status updates (what `<iq xmlns="status"><privacy/>` answers). */
  setStatusPrivacy(phone: string, type: string, list: string[]): { type: string; list: string[] } {
    if (type !== 'contacts' && type !== 'blacklist' && type !== 'whitelist') throw new SimError(400, 'type must be contacts|blacklist|whitelist');
    if (!Array.isArray(list) || list.some((jid) => typeof jid !== 'string' || !jid.includes('@'))) throw new SimError(400, 'list must be an array of JIDs');
    const account = this.account(phone);
    account.statusPrivacy = { type, list: [...list] };
    this.sim.stateChanged();
    return account.statusPrivacy;
  }

  setAutoReceipts(phone: string, settings: { deliveredMs?: number | null; readMs?: number | null }): void {
    const account = this.account(phone);
    account.autoReceipts = {
      deliveredMs: settings.deliveredMs === undefined ? account.autoReceipts.deliveredMs : settings.deliveredMs,
      readMs: settings.readMs === undefined ? account.autoReceipts.readMs : settings.readMs,
    };
    this.sim.stateChanged();
  }

  /** Blocked contacts of the account, as the blocklist query answers them (LID JIDs). */
  blocklist(phone: string): string[] {
    return [...this.account(phone).blocklist];
  }

  /** The phone blocks or unblocks a contact (phone, PN or LID JID); linked devices are told. */
  setBlocked(phone: string, contact: string, block: boolean): { blocklist: string[] } {
    const account = this.account(phone);
    const target = typeof contact === 'string' && contact ? this.sim.registry.resolveUser(contact.includes('@') ? contact : digitsOnly(contact)) : undefined;
    if (!target) throw new SimError(404, `no account ${contact}`);
    if (block) account.blocklist.add(target.lidJid);
    else account.blocklist.delete(target.lidJid);
    this.notify.blocklistChanged(account, [{ jid: target.lidJid, action: block ? 'block' : 'unblock' }]);
    this.sim.stateChanged();
    return { blocklist: [...account.blocklist] };
  }

  /**
   * The phone changes app state (label, pin, archive… as Baileys' ChatModification) for a chat. `collection`
   * puts the mutation in another collection than Baileys' (as an older client did: WA Web 2023 kept quick
   * replies in regular_low).
   */
  async appStateModify(phone: string, jid: string, mod: ChatModification, collection?: string): Promise<{ name: string; version: number }> {
    const account = this.account(phone);
    if (typeof jid !== 'string' || !mod || typeof mod !== 'object') throw new SimError(400, 'jid and mod are required');
    if (collection !== undefined && !APP_STATE_COLLECTIONS.includes(collection))
      throw new SimError(400, `collection must be ${APP_STATE_COLLECTIONS.join('|')}`);
    let result: { name: string; version: number };
    try {
      result = await phonePatch(account, jid, mod, collection);
    } catch (err) {
      throw new SimError(400, `invalid chat modification: ${(err as Error).message}`);
    }
    this.notify.announceAppState(account, [result]);
    this.sim.stateChanged();
    return result;
  }

  /** Every app-state mutation stored for the account, decrypted with the account key. */
  appState(phone: string): Promise<Record<string, { version: number; mutations: DecodedMutation[] }>> {
    return decodeAppState(this.account(phone));
  }

  /** The account's profile picture as its device set it (the JPEG), if it has one. */
  profilePicture(phone: string): ProfilePicture | undefined {
    return this.sim.profiles.picture(this.account(phone));
  }

  /** The phone sets (a JPEG) or removes (null) the account's picture. */
  setProfilePicture(phone: string, jpeg: Buffer | null): ProfilePicture | undefined {
    return this.sim.profiles.setPicture(this.account(phone), jpeg);
  }

  /** The phone's chat notes (WhatsApp Business), as the app-state `note_edit` mutations of the phone and its devices left them. */
  notes(phone: string): Promise<PhoneNote[]> {
    return phoneNotes(this.account(phone));
  }

  /** The phone writes a chat's note ('' deletes it); its linked devices are told to sync. */
  async writeNote(phone: string, chatJid: string, text: string): Promise<PhoneNote> {
    const account = this.account(phone);
    if (!chatJid.includes('@')) throw new SimError(400, 'chatJid must be a JID');
    const { note, ...changed } = await phoneWriteNote(account, chatJid, text);
    this.notify.announceAppState(account, [changed]);
    this.sim.stateChanged();
    return note;
  }

  /** The phone's address book, as the app-state contact mutations (the phone's and its devices') left it. */
  addressBook(phone: string): Promise<AddressBookEntry[]> {
    return addressBookOf(this.account(phone));
  }

  /** The phone's chat list as its app state leaves it: pinned, archived, muted, read, cleared, deleted per chat. */
  chats(phone: string): Promise<PhoneChat[]> {
    return phoneChats(this.account(phone));
  }

  inbox(phone: string, query: InboxQuery = {}): InboxEntry[] {
    const account = this.account(phone);
    const since = query.since ?? 0;
    return account.inbox.filter((e) => e.seq > since && (query.includeOwn || !e.fromMe));
  }

  /**
   * What the phone could not decrypt (it asked for a retry each time): how many, and the last 1,000 by
   * id. A message that never became readable is one the phone's user never saw, whatever its ack said.
   */
  decryptFailures(phone: string): { count: number; recent: Array<{ id: string; from: string; error: string; at: number }> } {
    const agent = this.sim.phoneOf(this.account(phone));
    return { count: agent.decryptFailures, recent: [...agent.decryptFailedIds] };
  }

  /** The trusted-contact tokens the account issued and was issued, and what its 1:1 messages carried. */
  privacyTokensOf(phone: string): TokenView {
    return this.sim.privacyTokens.view(this.account(phone));
  }

  outbox(phone: string): OutboxEntry[] {
    return [...this.account(phone).outbox.values()];
  }

  sendReceipts(phone: string, chat: string, ids: string[], type: ReceiptType): { sent: number } {
    const account = this.account(phone);
    if (!Array.isArray(ids) || ids.some((id) => typeof id !== 'string')) throw new SimError(400, 'ids must be an array of strings');
    if (type !== 'delivered' && type !== 'read' && type !== 'played') throw new SimError(400, 'type must be delivered|read|played');
    if (typeof chat !== 'string' || !chat) throw new SimError(400, 'chat is required');
    const chatJid = chat.includes('@') ? chat : `${digitsOnly(chat)}@s.whatsapp.net`;
    return { sent: this.sim.phoneOf(account).sendReceipts(chatJid, ids, type) };
  }

  private account(phone: string): Account {
    return requireAccount(this.sim.registry, phone);
  }
}
