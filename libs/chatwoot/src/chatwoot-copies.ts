// The WhatsApp → Chatwoot half of the bridge (chatwoot-sync.ts runs the jobs): a WhatsApp message copied
// into its chat's Chatwoot conversation (exactly once: found again by its source id on a retry), its
// media fetched through the session worker, and receipts and deletions carried over to the copies.
import type { Bus } from '@gw/bus';
import { Subjects, type InstanceRpc } from '@gw/contracts';
import type { ChatwootConfigRow, ChatwootJob, ChatwootRepository, FileRepository, LidMappingRepository } from '@gw/persistence';
import type { Logger } from '@gw/platform';
import { type ChatwootAttachmentUpload, type ChatwootClient, ChatwootError } from './chatwoot-client';
import { ChatwootContacts, StaleChat } from './chatwoot-contacts';
import { sourceIdOf, type WaChatFields, type WaMessageFields } from './chatwoot-jobs';
import { renderMessage } from './chatwoot-render';

/** How long a media link of a copied message lives in the file store (only for the upload). */
const MEDIA_TTL_MS = 10 * 60_000;

export class ChatwootCopies {
  private readonly contacts: ChatwootContacts;

  constructor(
    private readonly repository: ChatwootRepository,
    lids: LidMappingRepository,
    private readonly files: FileRepository,
    private readonly bus: Bus,
    /** Names this runner in the contact lease. */
    claimer: string,
    private readonly config: { requestTimeoutMs: number; workerTimeoutMs: number; maxRefusals: number },
    private readonly logger: Logger,
  ) {
    this.contacts = new ChatwootContacts(repository, lids, claimer, config, logger);
  }

  async copyMessage(job: ChatwootJob, config: ChatwootConfigRow, client: ChatwootClient): Promise<string> {
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
        return await this.contacts.conversationOf(job, config, client, chat, message, forceNew);
      } catch (error) {
        if (!(error instanceof StaleChat)) throw error;
        await this.repository.forgetChat(job.instanceId, error.chatKey);
        return this.contacts.conversationOf(job, config, client, chat, message);
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
    const { content, contentAttributes, media } = await renderMessage(this.repository, job.instanceId, message);
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
  async copyUpdate(job: ChatwootJob, client: ChatwootClient): Promise<string> {
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
