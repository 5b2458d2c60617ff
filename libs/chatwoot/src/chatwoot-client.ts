import { isIP } from 'node:net';
import type { SsrfGuard } from '@gw/platform';
import { type Agent, fetch, FormData, type Response } from 'undici';

/** What the bridge needs to reach one Chatwoot account (an instance's settings). */
export interface ChatwootAccount {
  url: string;
  accessToken: string;
  accountId: number;
}

/** A contact as Chatwoot's Application API answers it (the fields the bridge reads). */
export interface ChatwootContact {
  id: number;
  name: string;
  phone_number: string | null;
  identifier: string | null;
  contact_inboxes?: Array<{ source_id: string; inbox?: { id: number } }>;
}

export interface ChatwootConversation {
  id: number;
  inbox_id: number;
  status: string;
}

export interface ChatwootMessage {
  id: number;
  source_id?: string | null;
  content?: string | null;
}

export interface NewChatwootMessage {
  content: string;
  message_type: 'incoming' | 'outgoing';
  private?: boolean;
  source_id: string;
  content_attributes?: Record<string, unknown>;
}

export interface ChatwootAttachmentUpload {
  data: Buffer;
  fileName: string;
  mimetype: string;
}

/**
 * A refusal or failure from Chatwoot. `retryable`: worth trying again later (a 5xx, 408, 429, no
 * answer); otherwise Chatwoot will answer the same next time.
 */
export class ChatwootError extends Error {
  constructor(
    message: string,
    readonly status: number | null,
    readonly retryable: boolean,
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = 'ChatwootError';
  }
}

/**
 * Chatwoot's Application API (`/api/v1/accounts/{account_id}/…`, `api_access_token` header), the calls
 * the bridge makes. Every request goes through the given undici Agent, whose connector is the SSRF
 * guard (`guardedConnector`); the API's redirects are not followed, so the token never goes elsewhere.
 */
export class ChatwootClient {
  private readonly base: string;

  /**
   * `agent`: its connector is the SSRF guard (`guardedConnector`); `guard` also refuses a literal
   * address before a request is built, with a message that names the guard.
   */
  constructor(
    private readonly account: ChatwootAccount,
    private readonly agent: Agent,
    private readonly timeoutMs: number,
    private readonly guard: SsrfGuard,
  ) {
    this.base = `${account.url.replace(/\/+$/, '')}/api/v1/accounts/${account.accountId}`;
  }

  /** Contacts whose name, phone number, e-mail or identifier contain `query`. */
  async searchContacts(query: string): Promise<ChatwootContact[]> {
    const body = await this.call<{ payload?: ChatwootContact[] }>('GET', `/contacts/search?q=${encodeURIComponent(query)}&include_contact_inboxes=true`);
    return Array.isArray(body.payload) ? body.payload : [];
  }

  async getContact(id: number): Promise<ChatwootContact> {
    const body = await this.call<{ payload?: ChatwootContact } & Partial<ChatwootContact>>('GET', `/contacts/${id}`);
    return (body.payload ?? body) as ChatwootContact;
  }

  /** Creates a contact in the inbox; answers it and its contact inbox's source id. */
  async createContact(fields: {
    inbox_id: number;
    name: string;
    phone_number?: string;
    identifier: string;
  }): Promise<{ contact: ChatwootContact; sourceId: string }> {
    const body = await this.call<{ payload?: { contact?: ChatwootContact; contact_inbox?: { source_id?: string } } }>('POST', '/contacts', fields);
    const contact = body.payload?.contact ?? (body.payload as unknown as ChatwootContact);
    if (!contact?.id) throw new ChatwootError('Chatwoot answered a contact without an id', null, true);
    return { contact, sourceId: body.payload?.contact_inbox?.source_id ?? '' };
  }

  async updateContact(id: number, fields: { name?: string; phone_number?: string; identifier?: string }): Promise<void> {
    await this.call('PUT', `/contacts/${id}`, fields);
  }

  /** Adds the contact to the inbox; answers the contact inbox's source id. */
  async createContactInbox(contactId: number, inboxId: number, sourceId: string): Promise<string> {
    const body = await this.call<{ source_id?: string }>('POST', `/contacts/${contactId}/contact_inboxes`, { inbox_id: inboxId, source_id: sourceId });
    return body.source_id ?? sourceId;
  }

  async contactConversations(contactId: number): Promise<ChatwootConversation[]> {
    const body = await this.call<{ payload?: ChatwootConversation[] }>('GET', `/contacts/${contactId}/conversations`);
    return Array.isArray(body.payload) ? body.payload : [];
  }

  async createConversation(fields: { source_id: string; inbox_id: number; contact_id: number; status: 'open' }): Promise<ChatwootConversation> {
    const body = await this.call<ChatwootConversation>('POST', '/conversations', fields);
    if (!body?.id) throw new ChatwootError('Chatwoot answered a conversation without an id', null, true);
    return { id: body.id, inbox_id: body.inbox_id ?? fields.inbox_id, status: body.status ?? 'open' };
  }

  async toggleStatus(conversationId: number, status: 'open' | 'resolved' | 'pending'): Promise<void> {
    await this.call('POST', `/conversations/${conversationId}/toggle_status`, { status });
  }

  /** The conversation's messages, newest page (Chatwoot answers the last 20 or so). */
  async listMessages(conversationId: number): Promise<ChatwootMessage[]> {
    const body = await this.call<{ payload?: ChatwootMessage[] }>('GET', `/conversations/${conversationId}/messages`);
    return Array.isArray(body.payload) ? body.payload : [];
  }

  /** Creates a message; with attachments it goes as multipart/form-data (`attachments[]`), as Chatwoot's dashboard sends it. */
  async createMessage(conversationId: number, message: NewChatwootMessage, attachments: ChatwootAttachmentUpload[] = []): Promise<ChatwootMessage> {
    let body: unknown = message;
    if (attachments.length > 0) {
      const form = new FormData();
      form.append('content', message.content);
      form.append('message_type', message.message_type);
      form.append('private', String(message.private ?? false));
      form.append('source_id', message.source_id);
      // Rails reads nested form fields (content_attributes[in_reply_to]) as a hash; a JSON string would stay a string.
      for (const [key, value] of Object.entries(message.content_attributes ?? {})) form.append(`content_attributes[${key}]`, String(value));
      for (const attachment of attachments) {
        form.append('attachments[]', new Blob([new Uint8Array(attachment.data)], { type: attachment.mimetype }), attachment.fileName);
      }
      body = form;
    }
    const created = await this.call<ChatwootMessage>('POST', `/conversations/${conversationId}/messages`, body);
    if (!created?.id) throw new ChatwootError('Chatwoot answered a message without an id', null, true);
    return created;
  }

  async deleteMessage(conversationId: number, messageId: number): Promise<void> {
    await this.call('DELETE', `/conversations/${conversationId}/messages/${messageId}`);
  }

  /** Sets a message's delivery status (API inboxes only): sent, delivered, read or failed. */
  async updateMessageStatus(
    conversationId: number,
    messageId: number,
    status: 'sent' | 'delivered' | 'read' | 'failed',
    externalError?: string,
  ): Promise<void> {
    await this.call('PATCH', `/conversations/${conversationId}/messages/${messageId}`, { status, ...(externalError ? { external_error: externalError } : {}) });
  }

  /**
   * An attachment of an agent's message (`data_url`). Chatwoot's are Active Storage links that redirect
   * to the file's storage (disk or a bucket), so redirects are followed, at most 5, each hop through
   * the SSRF guard as the first; no token is sent (the links are signed). Files over `maxBytes` are refused.
   */
  async download(url: string, maxBytes: number): Promise<ChatwootAttachmentUpload> {
    let current = url;
    for (let hop = 0; hop <= 5; hop++) {
      const target = new URL(current);
      if (target.protocol !== 'http:' && target.protocol !== 'https:')
        throw new ChatwootError(`attachment: ${target.protocol} links are not fetched`, null, false);
      const host = target.hostname.replace(/^\[|\]$/g, '');
      if (isIP(host) && !this.guard.isAddressAllowed(host))
        throw new ChatwootError(`attachment: refused by the SSRF guard (${host} is private or reserved)`, null, false);
      let response;
      try {
        response = await fetch(target, { redirect: 'manual', dispatcher: this.agent, signal: AbortSignal.timeout(this.timeoutMs * 4) });
      } catch (error) {
        throw new ChatwootError(`attachment: ${describe(error)}`, null, true);
      }
      if (response.status >= 300 && response.status < 400 && response.headers.get('location')) {
        await response.body?.cancel().catch(() => undefined);
        current = new URL(response.headers.get('location') as string, target).toString();
        continue;
      }
      if (!response.ok) {
        await response.body?.cancel().catch(() => undefined);
        throw new ChatwootError(
          `attachment: the file's server answered ${response.status}`,
          response.status,
          response.status >= 500 || response.status === 429,
        );
      }
      const data = await readAtMost(response, maxBytes, () => new ChatwootError(`attachment: larger than ${Math.round(maxBytes / 1_048_576)} MB`, null, false));
      const fileName = decodeURIComponent(target.pathname.split('/').pop() ?? '') || 'file';
      return {
        data,
        fileName,
        mimetype: (response.headers.get('content-type') ?? '').split(';')[0].trim() || 'application/octet-stream',
      };
    }
    throw new ChatwootError('attachment: too many redirects', null, false);
  }

  private async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = { api_access_token: this.account.accessToken, accept: 'application/json' };
    let payload: string | FormData | undefined;
    if (body instanceof FormData) payload = body;
    else if (body !== undefined) {
      payload = JSON.stringify(body);
      headers['content-type'] = 'application/json';
    }
    const host = new URL(this.base).hostname.replace(/^\[|\]$/g, '');
    if (isIP(host) && !this.guard.isAddressAllowed(host))
      throw new ChatwootError(`${method} ${path}: refused by the SSRF guard (${host} is private or reserved)`, null, true);
    let response;
    try {
      // `manual`: a redirect would carry the api_access_token to wherever it points (a private address included).
      response = await fetch(`${this.base}${path}`, {
        method,
        headers,
        body: payload,
        redirect: 'manual',
        dispatcher: this.agent,
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (error) {
      throw new ChatwootError(`${method} ${path}: ${describe(error)}`, null, true);
    }
    if (response.status >= 300 && response.status < 400) {
      await response.body?.cancel().catch(() => undefined);
      throw new ChatwootError(
        `${method} ${path}: Chatwoot answered ${response.status}, a redirect, which is not followed; set the URL Chatwoot answers at itself`,
        response.status,
        false,
      );
    }
    let text = '';
    try {
      const tooLarge = () => new ChatwootError(`${method} ${path}: Chatwoot's answer is larger than ${MAX_ANSWER_BYTES / 1_048_576} MB`, response.status, true);
      text = (await readAtMost(response, MAX_ANSWER_BYTES, tooLarge)).toString('utf8');
    } catch (error) {
      if (error instanceof ChatwootError) throw error;
    }
    if (!response.ok) {
      // A refused token (401/403) is our access being down, as an outage is: retried until the settings are fixed, nothing dropped.
      const retryable = response.status >= 500 || [401, 403, 408, 429].includes(response.status);
      throw new ChatwootError(
        `${method} ${path}: Chatwoot answered ${response.status} ${text.slice(0, 300)}`.trim(),
        response.status,
        retryable,
        retryAfterMs(response.headers.get('retry-after')),
      );
    }
    if (!text) return {} as T;
    try {
      return JSON.parse(text) as T;
    } catch {
      throw new ChatwootError(`${method} ${path}: Chatwoot answered something that is not JSON`, response.status, true);
    }
  }
}

/** The largest answer read from Chatwoot's API (its pages are a few kB; anything far larger is not Chatwoot). */
export const MAX_ANSWER_BYTES = 4 * 1_048_576;

/** A response's body, refused (`tooLarge`) past `maxBytes` — by its Content-Length before reading, or while reading. */
async function readAtMost(response: Response, maxBytes: number, tooLarge: () => Error): Promise<Buffer> {
  if (Number(response.headers.get('content-length') ?? 0) > maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    throw tooLarge();
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response.body ?? []) {
    size += (chunk as Uint8Array).length;
    if (size > maxBytes) throw tooLarge(); // (leaving the loop cancels the body)
    chunks.push(Buffer.from(chunk as Uint8Array));
  }
  return Buffer.concat(chunks);
}

/** The longest wait a Retry-After may ask for: a wrong or hostile value must not park a conversation for days. */
export const MAX_RETRY_AFTER_MS = 3_600_000;

/** A Retry-After header (seconds or an HTTP date, RFC 9110 §10.2.3) in milliseconds, at most an hour; undefined when absent or unreadable. */
export function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
  const text = header?.trim();
  if (!text) return undefined;
  const ms = /^\d+$/.test(text) ? Number(text) * 1000 : Date.parse(text) - now;
  return Number.isFinite(ms) && ms > 0 ? Math.min(ms, MAX_RETRY_AFTER_MS) : undefined;
}

function describe(error: unknown): string {
  const err = error as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (err?.name === 'TimeoutError') return 'timed out';
  if (err?.cause?.code === 'ESSRF') return `refused by the SSRF guard: ${err.cause.message ?? ''}`;
  return err?.cause?.message ?? err?.message ?? 'request failed';
}
