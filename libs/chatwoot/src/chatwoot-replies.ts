// The Chatwoot → WhatsApp half of the bridge (chatwoot-sync.ts runs the jobs): an agent's reply, its
// attachments fetched from Chatwoot and staged in the file store, sent through the session worker that
// holds the instance (queued, same ids on a retry), and an agent's deletion revoked on WhatsApp.
import type { Bus } from '@gw/bus';
import { ErrorCode, RpcError, Subjects, type InstanceRpc, type OutboundContent, type SendRequest } from '@gw/contracts';
import type { ChatwootConfigRow, ChatwootJob, ChatwootRepository, FileRepository } from '@gw/persistence';
import type { ChatwootClient } from './chatwoot-client';
import { type ChatwootAttachmentRef, mediaTypeOf, Refused, replyLayout, revokeIdsOf, whatsappIdsOf } from './chatwoot-jobs';

/** The instance is not reachable now: the job waits without it counting as a refusal. */
const UNREACHABLE: ReadonlySet<string> = new Set([
  ErrorCode.NoSession,
  ErrorCode.NotConnected,
  ErrorCode.Fenced,
  ErrorCode.Timeout,
  ErrorCode.CapacityExhausted,
]);

/** Send errors that will repeat: counted as refusals. */
const PERMANENT: ReadonlySet<string> = new Set([ErrorCode.BadRequest, ErrorCode.NotFound, ErrorCode.Forbidden]);

/** The largest attachment sent to WhatsApp (the worker's own limit for media). */
const MAX_ATTACHMENT_BYTES = 64 * 1024 * 1024;
/** How long an agent's attachment stays staged for the worker. */
const STAGED_TTL_MS = 3_600_000;

export class ChatwootReplies {
  constructor(
    private readonly repository: ChatwootRepository,
    private readonly files: FileRepository,
    private readonly bus: Bus,
    private readonly config: { workerTimeoutMs: number },
  ) {}

  /** An agent's reply (text and attachments) sent to the WhatsApp chat of its conversation. */
  async send(job: ChatwootJob, config: ChatwootConfigRow, client: ChatwootClient): Promise<string> {
    const payload = job.payload as {
      conversationId: number;
      cwMessageId: number;
      content: string;
      attachments: ChatwootAttachmentRef[];
      senderName: string;
      inReplyTo: number | null;
      contact: { identifier: string; phoneNumber: string };
    };
    const chatJid = await this.chatOfConversation(job.instanceId, payload.conversationId, payload.contact);
    if (!chatJid) throw new Refused(`conversation ${payload.conversationId} has no WhatsApp contact`);
    const signed = config.signMessages && payload.senderName && payload.content.trim() ? `*${payload.senderName}:*\n${payload.content}` : payload.content;
    const quoted = payload.inReplyTo ? (await this.repository.linksOfChatwoot(job.instanceId, payload.inReplyTo))[0]?.waMessageId : undefined;
    // The worker fetches URLs without following redirects (SSRF), and Chatwoot's attachment links are
    // redirects: the files are fetched here and staged in the file store for the worker.
    // The text is the caption of the first attachment that takes one (WhatsApp audio has none); else it goes first on its own.
    const { textFirst, captioned } = replyLayout(payload.content, payload.attachments);
    const parts: OutboundContent[] = [];
    if (textFirst) parts.push({ kind: 'text', text: signed, linkPreview: null });
    for (const [index, attachment] of payload.attachments.entries()) {
      const file = await client.download(attachment.url, MAX_ATTACHMENT_BYTES);
      const fileId = await this.files.store(job.instanceId, file.data, file.mimetype, attachment.fileName || file.fileName, STAGED_TTL_MS);
      parts.push(mediaContent(attachment, fileId, index === captioned ? signed : ''));
    }
    if (parts.length === 0) parts.push({ kind: 'text', text: signed, linkPreview: null });
    let failed = '';
    for (const [part, content] of parts.entries()) {
      const ids = whatsappIdsOf(job.instanceId, payload.cwMessageId, part);
      await this.repository.link(job.instanceId, {
        waMessageId: ids.messageId,
        cwMessageId: payload.cwMessageId,
        cwConversationId: payload.conversationId,
        origin: 'chatwoot',
        chatJid,
      });
      const record = await this.sendToWorker(job.instanceId, {
        instanceId: job.instanceId,
        ...ids,
        chatJid,
        content,
        quotedId: part === 0 ? quoted : undefined,
        record: {
          sendFunction: 'Chatwoot',
          sendPayload: { conversation_id: payload.conversationId, message_id: payload.cwMessageId },
          trackSource: 'chatwoot',
          trackId: String(payload.cwMessageId),
          sendFolderId: '',
        },
      });
      if (record.status === 'Failed') failed = record.error || 'WhatsApp refused the message';
    }
    if (failed) {
      await client.updateMessageStatus(payload.conversationId, payload.cwMessageId, 'failed', failed).catch(() => undefined);
      return `failed: ${failed}`;
    }
    return 'done';
  }

  /** An agent's deleted reply revoked on WhatsApp (every part sent for it). */
  async delete(job: ChatwootJob): Promise<string> {
    const { cwMessageId } = job.payload as { cwMessageId: number };
    const links = (await this.repository.linksOfChatwoot(job.instanceId, cwMessageId)).filter((link) => link.origin === 'chatwoot' && link.chatJid);
    for (const link of links) {
      await this.sendToWorker(job.instanceId, {
        instanceId: job.instanceId,
        ...revokeIdsOf(job.instanceId, link.waMessageId),
        chatJid: link.chatJid,
        content: { kind: 'delete', targetMessageId: link.waMessageId },
        record: {
          sendFunction: 'Chatwoot',
          sendPayload: { message_id: cwMessageId, deleted: true },
          trackSource: 'chatwoot',
          trackId: String(cwMessageId),
          sendFolderId: '',
        },
      });
    }
    return links.length ? 'done' : 'skipped: nothing sent for it';
  }

  /** The WhatsApp chat of a conversation: the bridge's map, else the contact's identifier (a JID) or phone number. */
  private async chatOfConversation(instanceId: string, conversationId: number, contact: { identifier: string; phoneNumber: string }): Promise<string> {
    const row = await this.repository.chatOfConversation(instanceId, conversationId);
    if (row) return row.chatKey;
    if (/^[\w.:-]+@(s\.whatsapp\.net|lid|g\.us)$/.test(contact.identifier ?? '')) return contact.identifier;
    const digits = (contact.phoneNumber ?? '').replace(/\D/g, '');
    return digits.length >= 8 ? `${digits}@s.whatsapp.net` : '';
  }

  /** One send through the session worker holding the instance; unreachable now → retried later (same id). */
  private async sendToWorker(instanceId: string, request: SendRequest): Promise<InstanceRpc['send']['reply']> {
    try {
      // Queued: a send that lost its connection before reaching WhatsApp comes back (NotConnected) and the job retries it.
      return await this.bus.request<InstanceRpc['send']['reply']>(
        Subjects.instance(instanceId, 'send'),
        { ...request, queued: true },
        { timeoutMs: this.config.workerTimeoutMs },
      );
    } catch (error) {
      if (error instanceof RpcError && !UNREACHABLE.has(error.code) && PERMANENT.has(error.code)) {
        throw new Refused(`WhatsApp send refused: ${error.message}`);
      }
      throw error;
    }
  }
}

function mediaContent(attachment: ChatwootAttachmentRef, fileId: string, caption: string): OutboundContent {
  const mediaType = mediaTypeOf(attachment);
  return {
    kind: 'media',
    mediaType,
    source: { fileId },
    mimetype: '',
    caption: mediaType === 'audio' ? '' : caption,
    fileName: attachment.fileName,
    ptt: false,
    gifPlayback: false,
    ptv: false,
    viewOnce: false,
    thumbnailBase64: '',
  };
}
