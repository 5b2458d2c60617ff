import type { Bus } from '@gw/bus';
import { Subjects, type InstanceRpc } from '@gw/contracts';
import { ChatwootRepository, type ChatwootChatRow, type ChatwootConfigRow, type ChatwootJob, FileRepository, LidMappingRepository } from '@gw/persistence';
import { guardedConnector, LoopWaker, type Logger, type SsrfGuard } from '@gw/platform';
import { OutboxFollower } from '@gw/relay';
import { randomBytes } from 'node:crypto';
import { Agent } from 'undici';
import type { DataSource } from 'typeorm';
import { ChatwootClient, type ChatwootAttachmentUpload, ChatwootError } from './chatwoot-client';
import { JobKind, jobsOfEvents, lidsOfEvents, objectOf, Refused, sourceIdOf, type WaChatFields, type WaMessageFields } from './chatwoot-jobs';
import { ChatwootReplies } from './chatwoot-replies';

export interface ChatwootSyncConfig {
  /** Names this process in its claims. */
  runnerId: string;
  /** How long a claimed job is this runner's before another may take it over (a crashed runner's jobs wait this long). */
  claimMs: number;
  /** Fallback poll for due jobs (retries falling due, jobs written by the gateway's webhook receiver). */
  pollIntervalMs: number;
  /** Jobs claimed per pass (each from a different lane), run side by side. */
  batchSize: number;
  /** Timeout of one call to Chatwoot. */
  requestTimeoutMs: number;
  /** How long a send or media download through the session worker is awaited (a holder that died answers nothing; the job is then retried, through its heir). */
  workerTimeoutMs: number;
  /** Wait before try n+1 (the last repeats): Chatwoot down keeps the lane waiting, never drops it. */
  retryScheduleMs: number[];
  /** Tries after which a refusal Chatwoot will repeat (a 4xx) gives the job up. */
  maxRefusals: number;
  /** Finished jobs are kept this long (a redelivered webhook within it is recognised by its key). */
  keepDoneMs: number;
  ssrf: SsrfGuard;
}

export const CHATWOOT_SYNC_DEFAULTS = {
  claimMs: 60_000,
  pollIntervalMs: 500,
  batchSize: 16,
  requestTimeoutMs: 15_000,
  workerTimeoutMs: 60_000,
  retryScheduleMs: [1_000, 5_000, 15_000, 60_000, 300_000],
  maxRefusals: 3,
  keepDoneMs: 7 * 86_400_000,
} as const;

/** The contact the bridge knew for a chat is gone from Chatwoot (a 404 for it). */
class StaleChat extends Error {
  constructor(readonly chatKey: string) {
    super(`the Chatwoot contact of ${chatKey} is gone`);
  }
}

/** How long a media link of a copied message lives in the file store (only for the upload). */
const MEDIA_TTL_MS = 10 * 60_000;

/**
 * The bridge's worker, hosted by the webhook relay (embedded in the gateway by default; any number of
 * processes side by side). Two halves:
 *
 * 1. The outbox follower (consumer `chatwoot`, instances with the bridge on) turns `messages` and
 *    `messages_update` events into jobs in the same transaction that moves its cursor: each event
 *    becomes one job, exactly once.
 * 2. The runner claims due lane heads (ChatwootRepository.claim: one job per conversation at a time, in
 *    order) and performs them: calls to Chatwoot, sends through the session worker. A failure waits per
 *    `retryScheduleMs` and blocks its lane meanwhile (order kept); a crash leaves the claim to lapse.
 *
 * Exactly once: a copy into Chatwoot carries `source_id` WAID:<id>, is linked to its WhatsApp id right
 * after, and a retried job (attempts > 1: an earlier try may have created it and died before linking)
 * first looks for that source id in the conversation. A send to WhatsApp has a fixed message id, linked
 * before it is sent, so the worker's send ledger relays it at most once and its own `messages` event is
 * known as a copy.
 */
export class ChatwootSync {
  private readonly agent: Agent;
  private readonly follower: OutboxFollower;
  private readonly claimer: string;
  private running = false;
  private loopDone?: Promise<void>;
  private readonly waker = new LoopWaker();
  private lastPurge = 0;
  /** Instances whose follower step wrote jobs, until that step has committed. */
  private readonly enqueued = new Set<string>();
  /** The Chatwoot → WhatsApp half: agents' replies and deletions sent through the session workers. */
  private readonly replies: ChatwootReplies;

  constructor(
    dataSource: DataSource,
    private readonly repository: ChatwootRepository,
    private readonly lids: LidMappingRepository,
    private readonly files: FileRepository,
    private readonly bus: Bus,
    private readonly config: ChatwootSyncConfig,
    private readonly logger: Logger,
  ) {
    this.agent = new Agent({ connect: guardedConnector(config.ssrf, { timeout: config.requestTimeoutMs }), keepAliveTimeout: 10_000 });
    this.claimer = `${config.runnerId}:${randomBytes(4).toString('hex')}`;
    this.replies = new ChatwootReplies(repository, files, bus, config);
    this.follower = new OutboxFollower(
      dataSource,
      bus,
      {
        consumer: 'chatwoot',
        eventTypes: ['messages', 'messages_update'],
        instances: () => this.repository.enabledInstances(),
        handle: async (manager, instanceId, events) => {
          const numbers = await ChatwootRepository.numbersOfLidsWithin(manager, instanceId, lidsOfEvents(events));
          if ((await ChatwootRepository.enqueueWithin(manager, instanceId, jobsOfEvents(events, numbers))) > 0) this.enqueued.add(instanceId);
        },
        // The jobs are visible once the follower's step has committed: claim them then (a 20 ms timer guessed it before).
        committed: (instanceId) => {
          if (this.enqueued.delete(instanceId)) this.poke();
        },
      },
      logger,
    );
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.follower.start();
    this.loopDone = this.loop();
  }

  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.waker.halt();
    await this.follower.stop();
    await this.loopDone;
    await this.agent.close().catch(() => undefined);
  }

  /** Jobs may be due (a webhook was received, the follower wrote some): claim now. */
  poke(): void {
    this.waker.wake();
  }

  /** The set of instances with the bridge on changed. */
  refresh(): void {
    this.follower.refresh();
  }

  /** One claim and its jobs, by hand (tests). Returns how many jobs ran. */
  async runOnce(): Promise<number> {
    const jobs = await this.repository.claim(this.claimer, this.config.batchSize, this.config.claimMs);
    await Promise.all(jobs.map((job) => this.run(job)));
    return jobs.length;
  }

  private async loop(): Promise<void> {
    while (this.running) {
      this.waker.begin();
      let ran = 0;
      let failed = false;
      try {
        ran = await this.runOnce();
        if (Date.now() - this.lastPurge > 3_600_000) {
          this.lastPurge = Date.now();
          await this.repository.purgeDone(this.config.keepDoneMs);
        }
      } catch (error) {
        failed = true;
        this.logger.error({ err: error }, 'chatwoot sync pass failed');
      }
      if (!this.running) break;
      // Pokes keep coming (webhooks received, jobs written) while the database is down: wait before the next claim.
      if (failed) {
        await this.waker.backoff(this.config.pollIntervalMs);
        continue;
      }
      this.waker.succeeded();
      if (ran > 0) {
        await this.waker.turn();
        continue;
      }
      await this.waker.sleep(this.config.pollIntervalMs);
    }
  }

  /** Performs one claimed job, its claim renewed meanwhile. */
  private async run(job: ChatwootJob): Promise<void> {
    // A job may outlast its claim (a large media download, a slow Chatwoot): the claim is renewed while it
    // runs, so no runner takes it over and does it a second time alongside. Only a dead runner's lapses.
    const heartbeat = setInterval(
      () => {
        this.repository
          .extendClaim(job, this.config.claimMs)
          .catch((error: unknown) => this.logger.warn({ err: error, jobId: job.id }, 'renewing a chatwoot job claim failed'));
      },
      Math.max(100, Math.floor(this.config.claimMs / 3)),
    );
    heartbeat.unref();
    try {
      await this.attempt(job);
    } finally {
      clearInterval(heartbeat);
    }
  }

  /** One try of a job, and its outcome recorded (done, given up, or retried later). */
  private async attempt(job: ChatwootJob): Promise<void> {
    try {
      const config = await this.repository.findConfig(job.instanceId);
      if (!config || !config.enabled) {
        await this.repository.finish(job, 'skipped: the Chatwoot bridge is off');
        return;
      }
      const outcome = await this.perform(job, config);
      await this.repository.finish(job, outcome);
    } catch (error) {
      const refused = error instanceof Refused || (error instanceof ChatwootError && !error.retryable);
      const message = error instanceof Error ? error.message : String(error);
      if (refused && job.attempts >= this.config.maxRefusals) {
        this.logger.warn({ instanceId: job.instanceId, kind: job.kind, jobId: job.id, err: message }, 'chatwoot job given up');
        await this.repository.finish(job, 'failed', message).catch(() => undefined);
        await this.markReplyFailed(job, message);
        return;
      }
      const schedule = this.config.retryScheduleMs;
      let delay = schedule[Math.min(job.attempts - 1, schedule.length - 1)];
      if (error instanceof ChatwootError && error.retryAfterMs) delay = Math.max(delay, error.retryAfterMs);
      this.logger.info(
        { instanceId: job.instanceId, kind: job.kind, jobId: job.id, attempts: job.attempts, delay, err: message },
        'chatwoot job retried later',
      );
      await this.repository
        .retryLater(job, delay, message)
        .catch((failure: unknown) => this.logger.warn({ err: failure }, 'recording a chatwoot retry failed'));
    }
  }

  /** An agent's reply that will not reach WhatsApp shows as failed in Chatwoot, with why (best effort). */
  private async markReplyFailed(job: ChatwootJob, reason: string): Promise<void> {
    if (job.kind !== JobKind.CwSend) return;
    const { conversationId, cwMessageId } = job.payload as { conversationId: number; cwMessageId: number };
    const config = await this.repository.findConfig(job.instanceId).catch(() => null);
    if (!config) return;
    await new ChatwootClient(config, this.agent, this.config.requestTimeoutMs, this.config.ssrf)
      .updateMessageStatus(conversationId, cwMessageId, 'failed', reason.slice(0, 500))
      .catch(() => undefined);
  }

  private perform(job: ChatwootJob, config: ChatwootConfigRow): Promise<string> {
    const client = new ChatwootClient(config, this.agent, this.config.requestTimeoutMs, this.config.ssrf);
    switch (job.kind) {
      case JobKind.WaMessage:
        return this.copyMessage(job, config, client);
      case JobKind.WaUpdate:
        return this.copyUpdate(job, client);
      case JobKind.CwSend:
        return this.replies.send(job, config, client);
      case JobKind.CwDelete:
        return this.replies.delete(job);
      default:
        return Promise.resolve(`skipped: unknown kind ${job.kind}`);
    }
  }

  // --- WhatsApp → Chatwoot --------------------------------------------------------------------------

  private async copyMessage(job: ChatwootJob, config: ChatwootConfigRow, client: ChatwootClient): Promise<string> {
    const message = job.payload.message as WaMessageFields;
    const chat = (job.payload.chat ?? {}) as WaChatFields;
    const waId = String(message.messageid);
    if (message.isGroup && config.ignoreGroups) return 'skipped: group';
    if (message.type === 'protocol' || message.messageType === 'ProtocolMessage') return 'skipped: protocol message';
    const link = await this.repository.linkOfWhatsApp(job.instanceId, waId);
    if (link?.origin === 'chatwoot') return 'skipped: sent from Chatwoot';
    if (link?.cwMessageId) return 'skipped: already copied';

    // The contact known for the chat may have been deleted in Chatwoot: then it is found or created afresh, once.
    const locate = async (forceNew: boolean) => {
      try {
        return await this.conversationOf(job, config, client, chat, message, forceNew);
      } catch (error) {
        if (!(error instanceof StaleChat)) throw error;
        await this.repository.forgetChat(job.instanceId, error.chatKey);
        return this.conversationOf(job, config, client, chat, message);
      }
    };
    const target = await locate(false);
    const sourceId = sourceIdOf(waId);
    let conversationId = target.conversationId;
    const existing = job.attempts > 1 ? await this.findCopy(client, conversationId, sourceId) : null;
    if (existing) {
      await this.repository.link(job.instanceId, {
        waMessageId: waId,
        cwMessageId: existing,
        cwConversationId: conversationId,
        origin: 'whatsapp',
        chatJid: target.chatKey,
      });
      return 'done: found the copy of an earlier try';
    }
    const { content, contentAttributes, media } = await this.render(job.instanceId, message);
    const attachments = media ? await this.downloadMedia(job, waId, message) : [];
    const draft = {
      content: attachments.length === 0 && media ? `${content}${content ? '\n' : ''}[${media}: not available]`.trim() : content,
      message_type: message.fromMe ? ('outgoing' as const) : ('incoming' as const),
      private: false,
      source_id: sourceId,
      ...(contentAttributes ? { content_attributes: contentAttributes } : {}),
    };
    let created;
    try {
      created = await client.createMessage(conversationId, draft, attachments);
    } catch (error) {
      // The conversation was deleted in Chatwoot: a new one, once.
      if (!(error instanceof ChatwootError && error.status === 404)) throw error;
      conversationId = (await locate(true)).conversationId;
      created = await client.createMessage(conversationId, draft, attachments);
    }
    await this.repository.link(job.instanceId, {
      waMessageId: waId,
      cwMessageId: created.id,
      cwConversationId: conversationId,
      origin: 'whatsapp',
      chatJid: target.chatKey,
    });
    return 'done';
  }

  /** The Chatwoot message with `sourceId` among the conversation's latest, if an earlier try created it. */
  private async findCopy(client: ChatwootClient, conversationId: number, sourceId: string): Promise<number | null> {
    const messages = await client.listMessages(conversationId);
    return messages.find((candidate) => candidate.source_id === sourceId)?.id ?? null;
  }

  /**
   * The chat's contact and conversation in Chatwoot: from the bridge's chat map, else found by phone
   * number (or identifier) or created. A chat known by its LID and then by its number stays one contact
   * (its key moves to the number and Chatwoot's contact gets the number). Contact names written by the
   * bridge begin with `~` and follow the WhatsApp name; a name an agent set (no `~`) is left alone.
   */
  private async conversationOf(
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

  /** The Chatwoot text of a WhatsApp message, its reply context, and the media kind to attach (if any). */
  private async render(
    instanceId: string,
    message: WaMessageFields,
  ): Promise<{ content: string; contentAttributes?: Record<string, unknown>; media?: string }> {
    const content = objectOf(message.content);
    const text = typeof message.text === 'string' ? message.text : '';
    let body = text;
    let media: string | undefined;
    const attributes: Record<string, unknown> = {};
    const replyTo = async (waId: string) => {
      const target = waId ? await this.repository.linkOfWhatsApp(instanceId, waId) : null;
      if (target?.cwMessageId) attributes.in_reply_to = target.cwMessageId;
    };
    switch (message.messageType) {
      case 'LocationMessage':
      case 'LiveLocationMessage': {
        const lat = Number(content.degreesLatitude);
        const lng = Number(content.degreesLongitude);
        body = ['📍 Location', content.name, content.address, Number.isFinite(lat) && Number.isFinite(lng) ? `https://www.google.com/maps?q=${lat},${lng}` : '']
          .filter((line) => typeof line === 'string' && line)
          .join('\n');
        break;
      }
      case 'ContactMessage':
      case 'ContactsArrayMessage': {
        const cards = message.messageType === 'ContactMessage' ? [content] : Array.isArray(content.contacts) ? content.contacts : [];
        body = cards
          .map((entry: unknown) => {
            const card = objectOf(entry);
            const phones = [...String(card.vcard ?? '').matchAll(/TEL[^:]*:([^\r\n]+)/g)].map((match) => match[1].trim());
            return [`👤 ${card.displayName ?? ''}`.trim(), ...phones].join('\n');
          })
          .join('\n\n');
        break;
      }
      case 'ReactionMessage':
        await replyTo(String(message.reaction ?? ''));
        // An empty reaction takes the earlier one back.
        body = text || '↩️ reaction removed';
        if (text) attributes.is_reaction = true;
        break;
      default:
        if (message.type === 'media' && ['image', 'video', 'gif', 'ptv', 'audio', 'ptt', 'document', 'sticker'].includes(message.mediaType ?? ''))
          media = message.mediaType;
        else if (!body) body = message.vote ? String(message.vote) : `[${message.messageType}]`;
    }
    if (message.messageType !== 'ReactionMessage') await replyTo(String(message.quoted ?? ''));
    if (message.edited) {
      await replyTo(String(message.edited));
      body = `✏️ ${body}`;
    }
    if (message.isGroup && !message.fromMe) {
      const who = String(message.senderName || String(message.sender_pn || message.sender || '').split('@')[0]);
      body = `**${who}:**${body ? `\n${body}` : ''}`;
    }
    return { content: body, contentAttributes: Object.keys(attributes).length ? attributes : undefined, media };
  }

  /** The message's media from the session worker (through the file store); none after a few failed tries. */
  private async downloadMedia(job: ChatwootJob, waId: string, message: WaMessageFields): Promise<ChatwootAttachmentUpload[]> {
    try {
      const reply = await this.bus.request<InstanceRpc['media.download']['reply']>(
        Subjects.instance(job.instanceId, 'media.download'),
        { instanceId: job.instanceId, messageId: waId, ttlMs: MEDIA_TTL_MS },
        { timeoutMs: this.config.workerTimeoutMs },
      );
      const file = await this.files.read(reply.fileId, job.instanceId);
      if (!file) throw new Error('the downloaded file is gone');
      const fileName = String((message.content as Record<string, unknown> | undefined)?.fileName || reply.fileName || `${message.mediaType}`);
      return [{ data: file.data, fileName, mimetype: file.mimetype || reply.mimetype || 'application/octet-stream' }];
    } catch (error) {
      // The worker cannot fetch it now (no session, media expired): retried a few times, then copied as text.
      if (job.attempts < this.config.maxRefusals + 2) throw error;
      this.logger.warn({ instanceId: job.instanceId, messageId: waId, err: (error as Error).message }, 'media not copied to Chatwoot');
      return [];
    }
  }

  /** Receipts of our messages become Chatwoot statuses; a deletion on WhatsApp deletes the copy. */
  private async copyUpdate(job: ChatwootJob, client: ChatwootClient): Promise<string> {
    const { type, state, ids, fromMe, error } = job.payload as { type: string; state: string; ids: string[]; fromMe: boolean; error: string };
    let changed = 0;
    for (const waId of ids) {
      const link = await this.repository.linkOfWhatsApp(job.instanceId, waId);
      if (!link?.cwMessageId || !link.cwConversationId) continue;
      try {
        if (type === 'Deleted') await client.deleteMessage(link.cwConversationId, link.cwMessageId);
        else if (type === 'Failed')
          await client.updateMessageStatus(link.cwConversationId, link.cwMessageId, 'failed', error || 'WhatsApp refused the message');
        else if (fromMe) await client.updateMessageStatus(link.cwConversationId, link.cwMessageId, state === 'Delivered' ? 'delivered' : 'read');
        else continue;
        changed++;
      } catch (failure) {
        // Already deleted, or not an API inbox (only those take statuses): nothing to do again.
        if (failure instanceof ChatwootError && (failure.status === 404 || failure.status === 403)) continue;
        throw failure;
      }
    }
    return changed > 0 ? 'done' : 'skipped: no copied message';
  }
}
