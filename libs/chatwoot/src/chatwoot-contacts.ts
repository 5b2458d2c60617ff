// The chat's contact and conversation in Chatwoot for the WhatsApp → Chatwoot half (chatwoot-copies.ts):
// the bridge's chat map first, else found by phone number, identifier or LID, or created — under the
// instance's contact lease, so two lanes naming one person do not both create it.
import type { ChatwootChatRow, ChatwootConfigRow, ChatwootJob, ChatwootRepository, LidMappingRepository } from '@gw/persistence';
import type { Logger } from '@gw/platform';
import { type ChatwootClient, ChatwootError } from './chatwoot-client';
import type { WaChatFields, WaMessageFields } from './chatwoot-jobs';

/** The contact the bridge knew for a chat is gone from Chatwoot (a 404 for it). */
export class StaleChat extends Error {
  constructor(readonly chatKey: string) {
    super(`the Chatwoot contact of ${chatKey} is gone`);
  }
}

export class ChatwootContacts {
  constructor(
    private readonly repository: ChatwootRepository,
    private readonly lids: LidMappingRepository,
    /** Names this runner in the contact lease. */
    private readonly claimer: string,
    private readonly config: { requestTimeoutMs: number },
    private readonly logger: Logger,
  ) {}

  /**
   * The chat's contact and conversation in Chatwoot: from the bridge's chat map, else found by phone
   * number (or identifier) or created. A chat known by its LID and then by its number stays one contact
   * (its key moves to the number and Chatwoot's contact gets the number). Contact names written by the
   * bridge begin with `~` and follow the WhatsApp name; a name an agent set (no `~`) is left alone.
   */
  async conversationOf(
    job: ChatwootJob,
    config: ChatwootConfigRow,
    client: ChatwootClient,
    chat: WaChatFields,
    message: WaMessageFields,
    forceNew = false,
  ): Promise<{ conversationId: number; chatKey: string }> {
    const instanceId = job.instanceId;
    const isGroup = Boolean(message.isGroup || chat.wa_isGroup);
    let lid = String(chat.wa_chatlid || (String(message.chatid ?? '').endsWith('@lid') ? message.chatid : '') || '');
    let pn = String(chat.wa_chatid || '');
    if (pn.endsWith('@lid')) {
      lid = pn;
      pn = '';
    }
    if (!pn && lid && !isGroup) pn = (await this.lids.pnForLid(instanceId, lid)) ?? '';
    const waName = isGroup
      ? String(chat.wa_name || chat.name || message.groupName || (pn || lid || String(message.chatid)).split('@')[0])
      : String((!message.fromMe && message.senderName) || chat.wa_contactName || chat.wa_name || chat.name || '');

    // The common case, without the lease: a chat known, its conversation reusable, its name unchanged.
    const known = await this.repository.findChat(instanceId, pn || lid || String(message.chatid));
    if (known && this.reusable(config, known, forceNew) && !this.renamed(known, waName) && (!lid || known.lid === lid || known.chatKey === lid))
      return { conversationId: known.conversationId as number, chatKey: known.chatKey };
    // Anything that may create a contact or a conversation runs under the instance's contact lease: two
    // lanes naming one person (its LID, its number) would otherwise both find nothing and both create.
    return this.withContactLease(job, async () => {
      // What another holder learned meanwhile: the LID's number, the chat it saved.
      if (!pn && lid && !isGroup) pn = (await this.lids.pnForLid(instanceId, lid)) ?? '';
      const chatKey = pn || lid || String(message.chatid);
      const phone = !isGroup && pn.endsWith('@s.whatsapp.net') ? `+${pn.split('@')[0]}` : '';
      let row = await this.repository.findChat(instanceId, chatKey);
      if (!row && lid && lid !== chatKey) {
        const byLid = await this.repository.findChat(instanceId, lid);
        if (byLid) {
          // LID → phone number: the same contact, now with its number.
          if (phone) await client.updateContact(byLid.contactId, { phone_number: phone, identifier: chatKey });
          await this.repository.rekeyChat(instanceId, byLid.chatKey, chatKey);
          row = { ...byLid, chatKey, lid };
        }
      }
      if (!row) {
        row = await this.findOrCreateContact(instanceId, config, client, { chatKey, lid: lid !== chatKey ? lid : '', phone, name: waName, isGroup });
        return this.conversationFor(instanceId, config, client, row, forceNew);
      }
      const staleKey = row.chatKey;
      try {
        if (lid && lid !== row.chatKey && row.lid !== lid) {
          row = { ...row, lid };
          await this.repository.saveChat(instanceId, row);
        }
        if (this.renamed(row, waName)) {
          // Read Chatwoot's name first: an agent may have fixed it (removed the ~) since.
          const current = await client.getContact(row.contactId);
          if (typeof current.name === 'string' && current.name.startsWith('~')) await client.updateContact(row.contactId, { name: `~${waName}` });
          row = { ...row, contactName: typeof current.name === 'string' && !current.name.startsWith('~') ? current.name : `~${waName}` };
          await this.repository.saveChat(instanceId, row);
        }
        return await this.conversationFor(instanceId, config, client, row, forceNew);
      } catch (error) {
        if (error instanceof ChatwootError && error.status === 404) throw new StaleChat(staleKey);
        throw error;
      }
    });
  }

  /** The chat map's conversation can be used as it is. */
  private reusable(config: ChatwootConfigRow, row: ChatwootChatRow, forceNew: boolean): boolean {
    return row.conversationId !== null && !forceNew && !(config.createNewConversation && row.conversationStatus === 'resolved');
  }

  /** The contact's name was written by the bridge (`~`) and the WhatsApp name changed since. */
  private renamed(row: ChatwootChatRow, waName: string): boolean {
    return Boolean(waName) && row.contactName.startsWith('~') && row.contactName !== `~${waName}`;
  }

  /**
   * Runs `work` holding the instance's contact lease (a row in Postgres, so it holds across processes
   * without keeping a connection through the calls to Chatwoot). Waits for another holder a while (it
   * is doing a few calls to Chatwoot), then gives the try back to be retried later.
   */
  private async withContactLease<T>(job: ChatwootJob, work: () => Promise<T>): Promise<T> {
    const holder = `${this.claimer}:${job.id}`;
    const ttlMs = this.config.requestTimeoutMs * 8;
    const deadline = Date.now() + this.config.requestTimeoutMs * 2;
    for (let wait = 10; !(await this.repository.tryLockContacts(job.instanceId, holder, ttlMs)); wait = Math.min(wait * 2, 200)) {
      if (Date.now() > deadline) throw new Error('another job of this instance is still creating a Chatwoot contact');
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
    try {
      return await work();
    } finally {
      await this.repository
        .unlockContacts(job.instanceId, holder)
        .catch((error: unknown) => this.logger.warn({ err: error }, 'releasing the chatwoot contact lease failed'));
    }
  }

  /** The conversation of a known contact: the one the chat map has (unless resolved and a new one is wanted), an open one of the inbox, the latest, or a new one. */
  private async conversationFor(
    instanceId: string,
    config: ChatwootConfigRow,
    client: ChatwootClient,
    row: ChatwootChatRow,
    forceNew: boolean,
  ): Promise<{ conversationId: number; chatKey: string }> {
    const chatKey = row.chatKey;
    if (this.reusable(config, row, forceNew)) return { conversationId: row.conversationId as number, chatKey };
    let conversationId: number | null = null;
    let status = 'open';
    if (!forceNew) {
      const conversations = (await client.contactConversations(row.contactId)).filter((candidate) => Number(candidate.inbox_id) === config.inboxId);
      const open = conversations.filter((candidate) => candidate.status !== 'resolved').sort((a, b) => b.id - a.id)[0];
      const latest = conversations.sort((a, b) => b.id - a.id)[0];
      const chosen = open ?? (config.createNewConversation ? undefined : latest);
      if (chosen) {
        conversationId = chosen.id;
        status = chosen.status;
      }
    }
    if (conversationId === null) {
      conversationId = (await client.createConversation({ source_id: row.sourceId, inbox_id: config.inboxId, contact_id: row.contactId, status: 'open' })).id;
      status = 'open';
    }
    await this.repository.saveChat(instanceId, { ...row, conversationId, conversationStatus: status });
    return { conversationId, chatKey };
  }

  /**
   * The chat's contact in Chatwoot, found (by phone number, by the chat JID as identifier, or by the LID
   * it was first known by) or created. Runs under the contact lease; a create Chatwoot refuses as taken
   * (422: the number or identifier exists, created by an earlier try whose answer was lost) is looked up
   * again instead of failing.
   */
  private async findOrCreateContact(
    instanceId: string,
    config: ChatwootConfigRow,
    client: ChatwootClient,
    chat: { chatKey: string; lid: string; phone: string; name: string; isGroup: boolean },
  ): Promise<ChatwootChatRow> {
    const lookUp = async () => {
      const byKey = (await client.searchContacts(chat.phone ? chat.phone.slice(1) : chat.chatKey)).find(
        (contact) => (chat.phone && contact.phone_number === chat.phone) || contact.identifier === chat.chatKey,
      );
      if (byKey || !chat.lid) return byKey;
      // A contact created while only the LID was known (its chat row lost since): the same person.
      const byLid = (await client.searchContacts(chat.lid)).find((contact) => contact.identifier === chat.lid);
      if (byLid && chat.phone) await client.updateContact(byLid.id, { phone_number: chat.phone, identifier: chat.chatKey });
      return byLid;
    };
    const sourceOfInbox = (contact: { contact_inboxes?: Array<{ source_id: string; inbox?: { id: number } }> }) =>
      contact.contact_inboxes?.find((entry) => Number(entry.inbox?.id) === config.inboxId)?.source_id ?? '';
    let contact: { id: number; name: string; sourceId: string } | null = null;
    let found = await lookUp();
    if (!found) {
      const name = chat.isGroup ? `~${chat.name} (GROUP)` : `~${chat.name || chat.phone || chat.chatKey.split('@')[0]}`;
      try {
        const created = await client.createContact({
          inbox_id: config.inboxId,
          name,
          identifier: chat.chatKey,
          ...(chat.phone ? { phone_number: chat.phone } : {}),
        });
        contact = { id: created.contact.id, name: created.contact.name ?? name, sourceId: created.sourceId };
      } catch (error) {
        if (!(error instanceof ChatwootError && error.status === 422)) throw error;
        found = await lookUp();
        if (!found) throw error;
      }
    }
    if (found) contact = { id: found.id, name: found.name ?? '', sourceId: sourceOfInbox(found) };
    if (!contact) throw new Error('no Chatwoot contact'); // (unreachable: found or created)
    const sourceId = contact.sourceId || (await client.createContactInbox(contact.id, config.inboxId, chat.chatKey));
    const row: ChatwootChatRow = {
      chatKey: chat.chatKey,
      lid: chat.lid,
      contactId: contact.id,
      contactName: contact.name,
      sourceId,
      conversationId: null,
      conversationStatus: '',
    };
    await this.repository.saveChat(instanceId, row);
    return row;
  }
}
