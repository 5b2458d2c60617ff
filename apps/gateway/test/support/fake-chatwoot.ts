import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback Chatwoot for tests: the Application API calls the bridge makes, shaped after Chatwoot's
 * swagger (swagger/definitions/request/{contact,conversation}/*.yml) and controllers
 * (app/controllers/api/v1/accounts/…: contacts search/create/update, contact_inboxes, a contact's
 * conversations, conversations create/toggle_status, messages index/create (JSON or multipart with
 * `attachments[]`)/update (status, API inboxes)/destroy), and the webhooks Chatwoot posts to an API
 * inbox's webhook URL (`Message#webhook_data`, `Conversation#webhook_data` with `event`), including the
 * `message_created` of every message created through the API, as Chatwoot does.
 *
 * Test controls: `down` (every API call answers 503), `hang` (API calls are held until released),
 * `failCreatesAfterWriting` (a message create is stored, then answered 500: the crash window between
 * Chatwoot's write and our link), and helpers acting as an agent (reply, delete, resolve).
 */
export interface FakeAttachment {
  id: number;
  file_type: string;
  extension: string;
  data_url: string;
  file_size: number;
  data: Buffer;
  mimetype: string;
  fileName: string;
}

export interface FakeMessage {
  id: number;
  conversation_id: number;
  content: string;
  message_type: 'incoming' | 'outgoing' | 'activity';
  private: boolean;
  source_id: string | null;
  status: string;
  external_error?: string;
  content_attributes: Record<string, unknown>;
  sender: Record<string, unknown> | null;
  attachments: FakeAttachment[];
  created_at: number;
}

export interface FakeContact {
  id: number;
  name: string;
  phone_number: string | null;
  identifier: string | null;
  contact_inboxes: Array<{ source_id: string; inbox: { id: number } }>;
}

export interface FakeConversation {
  id: number;
  inbox_id: number;
  contact_id: number;
  source_id: string;
  status: string;
  assignee: Record<string, unknown> | null;
}

const AGENT = { id: 7, name: 'Ana Souza', available_name: 'Ana Souza', type: 'user', email: 'ana@example.com', availability_status: 'online' };

export class FakeChatwoot {
  readonly token = `cw-token-${randomBytes(6).toString('hex')}`;
  readonly accountId = 3;
  readonly inboxId = 9;
  contacts: FakeContact[] = [];
  conversations: FakeConversation[] = [];
  messages: FakeMessage[] = [];
  /** Every API request: method, path (query included) and when it came. */
  requests: Array<{ method: string; path: string; at: number }> = [];
  /** Webhooks posted and what the receiver answered. */
  webhooks: Array<{ body: Record<string, unknown>; status: number }> = [];
  webhookUrl = '';
  down = false;
  /** The next this many API calls are answered 429 with `Retry-After: retryAfterSeconds` (Rack::Attack's throttle). */
  tooManyRequests = 0;
  retryAfterSeconds = 1;
  failCreatesAfterWriting = 0;
  /** Each contact search answers this much later (two lanes searching at once overlap, as against a busy Chatwoot). */
  searchDelayMs = 0;
  /** Message creates are stored, then their answer is held until `release()` (a runner killed meanwhile never links them). */
  holdCreatesAfterWriting = false;
  private held: Array<() => void> = [];
  private holding = false;
  private server!: Server;
  private nextId = 100;
  baseUrl = '';

  async start(): Promise<void> {
    this.server = createServer((request, response) => void this.handle(request, response));
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.baseUrl = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.release();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** API calls wait (unanswered) until `release()`. */
  hang(): void {
    this.holding = true;
  }

  release(): void {
    this.holding = false;
    this.holdCreatesAfterWriting = false;
    for (const resume of this.held.splice(0)) resume();
  }

  conversationMessages(conversationId: number): FakeMessage[] {
    return this.messages.filter((message) => message.conversation_id === conversationId);
  }

  contactByPhone(phone: string): FakeContact | undefined {
    return this.contacts.find((contact) => contact.phone_number === `+${phone}`);
  }

  conversationOf(contact: FakeContact): FakeConversation | undefined {
    return this.conversations.filter((conversation) => conversation.contact_id === contact.id).sort((a, b) => b.id - a.id)[0];
  }

  // --- an agent at work ------------------------------------------------------------------------------

  /** An agent replies in the dashboard: the message is stored and its `message_created` posted. Answers the webhook body. */
  async agentReply(
    conversationId: number,
    content: string,
    options: { attachments?: Array<{ data: Buffer; mimetype: string; fileName: string }>; private?: boolean; inReplyTo?: number } = {},
  ): Promise<Record<string, unknown>> {
    const message = this.store(conversationId, {
      content,
      message_type: 'outgoing',
      private: options.private ?? false,
      source_id: null,
      content_attributes: options.inReplyTo ? { in_reply_to: options.inReplyTo } : {},
      sender: AGENT,
      attachments: (options.attachments ?? []).map((file) => this.attachment(file.data, file.mimetype, file.fileName)),
    });
    const conversation = this.conversations.find((candidate) => candidate.id === conversationId)!;
    conversation.assignee ??= AGENT;
    const body = this.messageWebhook('message_created', message);
    await this.postWebhook(body);
    return body;
  }

  /** An agent deletes a message (Chatwoot keeps it, emptied and marked deleted) and `message_updated` is posted. */
  async agentDelete(messageId: number): Promise<Record<string, unknown>> {
    const message = this.messages.find((candidate) => candidate.id === messageId)!;
    this.markDeleted(message);
    const body = this.messageWebhook('message_updated', message);
    await this.postWebhook(body);
    return body;
  }

  /** An agent changes the conversation's status: `conversation_status_changed` is posted. */
  async agentSetStatus(conversationId: number, status: 'open' | 'resolved' | 'pending'): Promise<Record<string, unknown>> {
    const conversation = this.conversations.find((candidate) => candidate.id === conversationId)!;
    const previous = conversation.status;
    conversation.status = status;
    // WebhookListener#conversation_status_changed: conversation.webhook_data merged with the event and changed_attributes.
    const body = {
      event: 'conversation_status_changed',
      ...this.conversationData(conversation),
      changed_attributes: [{ status: { previous_value: previous, current_value: status } }],
    };
    await this.postWebhook(body);
    return body;
  }

  /** An admin deletes a conversation: its messages go with it. */
  deleteConversation(conversationId: number): void {
    this.messages = this.messages.filter((message) => message.conversation_id !== conversationId);
    this.conversations = this.conversations.filter((conversation) => conversation.id !== conversationId);
  }

  /** An agent deletes a contact: Chatwoot deletes its conversations and their messages with it. */
  deleteContact(contactId: number): void {
    const conversations = new Set(this.conversations.filter((conversation) => conversation.contact_id === contactId).map((conversation) => conversation.id));
    this.messages = this.messages.filter((message) => !conversations.has(message.conversation_id));
    this.conversations = this.conversations.filter((conversation) => !conversations.has(conversation.id));
    this.contacts = this.contacts.filter((contact) => contact.id !== contactId);
  }

  async postWebhook(body: Record<string, unknown>, url = this.webhookUrl): Promise<number> {
    if (!url) return 0;
    const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    await response.text();
    this.webhooks.push({ body, status: response.status });
    return response.status;
  }

  // --- the Application API --------------------------------------------------------------------------

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', this.baseUrl);
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks);
    const answer = (status: number, body: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(body));
    };
    // Chatwoot's attachment links (url_for of Active Storage) redirect to where the file is stored.
    const link = url.pathname.match(/^\/rails\/active_storage\/blobs\/redirect\/(\d+)\/(.+)$/);
    if (link) {
      response.writeHead(302, { location: `/rails/active_storage/disk/${link[1]}/${link[2]}` });
      response.end();
      return;
    }
    const file = url.pathname.match(/^\/rails\/active_storage\/disk\/(\d+)\//);
    if (file) {
      const attachment = this.messages.flatMap((message) => message.attachments).find((candidate) => candidate.id === Number(file[1]));
      if (!attachment) return answer(404, { error: 'not found' });
      response.writeHead(200, { 'content-type': attachment.mimetype });
      response.end(attachment.data);
      return;
    }
    this.requests.push({ method: request.method ?? '', path: `${url.pathname}${url.search}`, at: Date.now() });
    if (this.holding) await new Promise<void>((resolve) => this.held.push(resolve));
    if (this.down) return answer(503, { error: 'Service Unavailable' });
    if (this.tooManyRequests > 0) {
      this.tooManyRequests--;
      response.writeHead(429, { 'content-type': 'text/plain', 'retry-after': String(this.retryAfterSeconds) });
      response.end('Retry later\n');
      return;
    }
    if (request.headers.api_access_token !== this.token) return answer(401, { error: 'Invalid Access Token' });
    const prefix = `/api/v1/accounts/${this.accountId}`;
    if (!url.pathname.startsWith(prefix)) return answer(404, { error: 'Resource could not be found' });
    const path = url.pathname.slice(prefix.length);
    const method = request.method ?? 'GET';
    let json: Record<string, any> = {};
    let form: FormData | null = null;
    if (String(request.headers['content-type'] ?? '').startsWith('multipart/form-data')) {
      form = await new Request(url, { method, headers: { 'content-type': String(request.headers['content-type']) }, body: raw }).formData();
    } else if (raw.length) {
      try {
        json = JSON.parse(raw.toString('utf8'));
      } catch {
        return answer(400, { error: 'malformed JSON' });
      }
    }
    let match: RegExpMatchArray | null;

    if (method === 'GET' && path === '/contacts/search') {
      if (this.searchDelayMs) await new Promise((resolve) => setTimeout(resolve, this.searchDelayMs));
      const q = (url.searchParams.get('q') ?? '').toLowerCase();
      const found = this.contacts.filter((contact) =>
        [contact.name, contact.phone_number ?? '', contact.identifier ?? ''].some((value) => value.toLowerCase().includes(q)),
      );
      return answer(200, { meta: { count: found.length, current_page: 1 }, payload: found });
    }
    if (method === 'POST' && path === '/contacts') {
      // Contact validates phone_number and identifier unique per account (app/models/contact.rb).
      if (json.phone_number && this.contacts.some((contact) => contact.phone_number === json.phone_number))
        return answer(422, { message: 'Phone number has already been taken' });
      if (json.identifier && this.contacts.some((contact) => contact.identifier === json.identifier))
        return answer(422, { message: 'Identifier has already been taken' });
      const contact: FakeContact = {
        id: this.nextId++,
        name: String(json.name ?? ''),
        phone_number: json.phone_number ?? null,
        identifier: json.identifier ?? null,
        contact_inboxes: [],
      };
      let contactInbox = null;
      if (json.inbox_id) {
        contactInbox = { source_id: randomBytes(8).toString('hex'), inbox: { id: Number(json.inbox_id) } };
        contact.contact_inboxes.push(contactInbox);
      }
      this.contacts.push(contact);
      return answer(200, { payload: { contact, contact_inbox: contactInbox } });
    }
    if ((match = path.match(/^\/contacts\/(\d+)$/))) {
      const contact = this.contacts.find((candidate) => candidate.id === Number(match![1]));
      if (!contact) return answer(404, { error: 'Resource could not be found' });
      if (method === 'PUT') {
        const taken = (field: 'phone_number' | 'identifier') =>
          typeof json[field] === 'string' && this.contacts.some((other) => other.id !== contact.id && other[field] === json[field]);
        if (taken('phone_number')) return answer(422, { message: 'Phone number has already been taken' });
        if (taken('identifier')) return answer(422, { message: 'Identifier has already been taken' });
        if (typeof json.name === 'string') contact.name = json.name;
        if (typeof json.phone_number === 'string') contact.phone_number = json.phone_number;
        if (typeof json.identifier === 'string') contact.identifier = json.identifier;
      }
      return answer(200, { payload: contact });
    }
    if (method === 'POST' && (match = path.match(/^\/contacts\/(\d+)\/contact_inboxes$/))) {
      const contact = this.contacts.find((candidate) => candidate.id === Number(match![1]));
      if (!contact) return answer(404, { error: 'Resource could not be found' });
      const entry = { source_id: String(json.source_id ?? randomBytes(8).toString('hex')), inbox: { id: Number(json.inbox_id) } };
      contact.contact_inboxes.push(entry);
      return answer(200, entry);
    }
    if (method === 'GET' && (match = path.match(/^\/contacts\/(\d+)\/conversations$/))) {
      const id = Number(match[1]);
      return answer(200, {
        payload: this.conversations.filter((conversation) => conversation.contact_id === id).map((conversation) => this.conversationData(conversation)),
      });
    }
    if (method === 'POST' && path === '/conversations') {
      const contact = this.contacts.find((candidate) => candidate.id === Number(json.contact_id));
      if (!contact) return answer(404, { error: 'Resource could not be found' });
      if (!json.source_id) return answer(422, { error: 'source_id required' });
      const conversation: FakeConversation = {
        id: this.nextId++,
        inbox_id: Number(json.inbox_id),
        contact_id: contact.id,
        source_id: String(json.source_id),
        status: String(json.status ?? 'open'),
        assignee: null,
      };
      this.conversations.push(conversation);
      return answer(200, { id: conversation.id, account_id: this.accountId, inbox_id: conversation.inbox_id, status: conversation.status });
    }
    if (method === 'POST' && (match = path.match(/^\/conversations\/(\d+)\/toggle_status$/))) {
      const conversation = this.conversations.find((candidate) => candidate.id === Number(match![1]));
      if (!conversation) return answer(404, { error: 'Resource could not be found' });
      conversation.status = String(json.status);
      return answer(200, { meta: {}, payload: { success: true, current_status: conversation.status, conversation_id: conversation.id } });
    }
    if ((match = path.match(/^\/conversations\/(\d+)\/messages(?:\/(\d+))?$/))) {
      const conversation = this.conversations.find((candidate) => candidate.id === Number(match![1]));
      if (!conversation) return answer(404, { error: 'Resource could not be found' });
      const messageId = match[2] ? Number(match[2]) : null;
      if (method === 'GET' && messageId === null)
        return answer(200, {
          meta: {},
          payload: this.conversationMessages(conversation.id)
            .slice(-20)
            .map((m) => this.messageJson(m)),
        });
      if (method === 'POST' && messageId === null) {
        const field = (name: string) => (form ? (form.get(name) as string | null) : json[name]);
        const files = form ? (form.getAll('attachments[]') as File[]) : [];
        const attachments = await Promise.all(files.map(async (file) => this.attachment(Buffer.from(await file.arrayBuffer()), file.type, file.name)));
        // Multipart: Rails' nested fields (content_attributes[key]); JSON: an object.
        const attributes = form ? nestedField(form, 'content_attributes') : json.content_attributes;
        const message = this.store(conversation.id, {
          content: String(field('content') ?? ''),
          message_type: field('message_type') === 'incoming' ? 'incoming' : 'outgoing',
          private: String(field('private')) === 'true',
          source_id: field('source_id') ?? null,
          content_attributes: attributes ?? {},
          sender: field('message_type') === 'incoming' ? { id: conversation.contact_id, type: 'contact' } : AGENT,
          attachments,
        });
        // Chatwoot posts every new message to the inbox webhook, the API's own too.
        void this.postWebhook(this.messageWebhook('message_created', message)).catch(() => undefined);
        if (this.holdCreatesAfterWriting) await new Promise<void>((resolve) => this.held.push(resolve));
        if (this.failCreatesAfterWriting > 0) {
          this.failCreatesAfterWriting--;
          return answer(500, { error: 'Internal Server Error' });
        }
        return answer(200, this.messageJson(message));
      }
      const message = this.messages.find((candidate) => candidate.id === messageId && candidate.conversation_id === conversation.id);
      if (!message) return answer(404, { error: 'Resource could not be found' });
      if (method === 'PATCH') {
        message.status = String(json.status);
        if (json.external_error) message.external_error = String(json.external_error);
        return answer(200, this.messageJson(message));
      }
      if (method === 'DELETE') {
        this.markDeleted(message);
        return answer(200, this.messageJson(message));
      }
    }
    return answer(404, { error: 'Resource could not be found' });
  }

  private store(conversationId: number, fields: Omit<FakeMessage, 'id' | 'conversation_id' | 'status' | 'created_at'>): FakeMessage {
    const message: FakeMessage = { id: this.nextId++, conversation_id: conversationId, status: 'sent', created_at: Math.floor(Date.now() / 1000), ...fields };
    this.messages.push(message);
    return message;
  }

  private attachment(data: Buffer, mimetype: string, fileName: string): FakeAttachment {
    const id = this.nextId++;
    const type = mimetype.split('/')[0];
    return {
      id,
      file_type: ['image', 'video', 'audio'].includes(type) ? type : 'file',
      extension: fileName.split('.').pop() ?? '',
      data_url: `${this.baseUrl}/rails/active_storage/blobs/redirect/${id}/${encodeURIComponent(fileName)}`,
      file_size: data.length,
      data,
      mimetype,
      fileName,
    };
  }

  private markDeleted(message: FakeMessage): void {
    message.content = 'This message was deleted';
    message.content_attributes = { ...message.content_attributes, deleted: true };
    message.attachments = [];
  }

  private attachmentJson(attachment: FakeAttachment, messageId: number) {
    return {
      id: attachment.id,
      message_id: messageId,
      file_type: attachment.file_type,
      account_id: this.accountId,
      extension: attachment.extension,
      data_url: attachment.data_url,
      thumb_url: '',
      file_size: attachment.file_size,
    };
  }

  private messageJson(message: FakeMessage) {
    return {
      id: message.id,
      content: message.content,
      inbox_id: this.inboxId,
      conversation_id: message.conversation_id,
      message_type: message.message_type === 'incoming' ? 0 : message.message_type === 'outgoing' ? 1 : 2,
      content_type: 'text',
      status: message.status,
      content_attributes: message.content_attributes,
      created_at: message.created_at,
      private: message.private,
      source_id: message.source_id,
      sender: message.sender,
      attachments: message.attachments.map((attachment) => this.attachmentJson(attachment, message.id)),
    };
  }

  private conversationData(conversation: FakeConversation) {
    const contact = this.contacts.find((candidate) => candidate.id === conversation.contact_id);
    return {
      id: conversation.id,
      inbox_id: conversation.inbox_id,
      status: conversation.status,
      channel: 'Channel::Api',
      can_reply: true,
      contact_inbox: { source_id: conversation.source_id },
      meta: {
        sender: contact ? { id: contact.id, name: contact.name, phone_number: contact.phone_number, identifier: contact.identifier, type: 'contact' } : {},
        assignee: conversation.assignee,
      },
      messages: [],
      labels: [],
      additional_attributes: {},
      custom_attributes: {},
      unread_count: 0,
      timestamp: Math.floor(Date.now() / 1000),
    };
  }

  private messageWebhook(event: string, message: FakeMessage): Record<string, unknown> {
    const conversation = this.conversations.find((candidate) => candidate.id === message.conversation_id)!;
    return {
      event,
      id: message.id,
      content: message.content,
      content_type: 'text',
      content_attributes: message.content_attributes,
      message_type: message.message_type,
      private: message.private,
      source_id: message.source_id,
      created_at: new Date(message.created_at * 1000).toISOString(),
      additional_attributes: {},
      sender: message.sender,
      conversation: this.conversationData(conversation),
      account: { id: this.accountId, name: 'Acme' },
      inbox: { id: this.inboxId, name: 'WhatsApp' },
      ...(message.attachments.length ? { attachments: message.attachments.map((attachment) => this.attachmentJson(attachment, message.id)) } : {}),
    };
  }
}

/** `name[key]` form fields as Rails reads them: a hash (digits and true/false as numbers and booleans here). */
function nestedField(form: FormData, name: string): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  for (const [key, value] of form.entries()) {
    const match = key.match(new RegExp(`^${name}\\[(\\w+)\\]$`));
    if (!match || typeof value !== 'string') continue;
    result[match[1]] = /^\d+$/.test(value) ? Number(value) : value === 'true' ? true : value === 'false' ? false : value;
  }
  return result;
}
