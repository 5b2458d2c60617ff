import { whatsappIdsOf } from '@gw/chatwoot';
import { ChatwootRepository } from '@gw/persistence';
import { ChatwootStack } from './support/chatwoot-stack';
import { nextPhone, sleep, waitFor } from './support/stack';

jest.setTimeout(120_000);

/**
 * The Chatwoot bridge (issue #16) end to end: real Baileys against the simulator, the gateway over
 * HTTP, the bridge's runner, and a loopback Chatwoot speaking its Application API and posting its
 * webhooks to the URL `PUT /chatwoot/config` answered.
 */
describe('Chatwoot bridge (HTTP, simulator, loopback Chatwoot)', () => {
  const stack = new ChatwootStack();
  const cw = stack.chatwoot;
  let instance: { id: string; token: string; phone: string };
  let contact: string;

  const say = (text: string, from = contact) => stack.control<{ id: string }>('POST', `/sim/accounts/${from}/send`, { to: instance.phone, text });
  /** The conversation of a phone in Chatwoot, once it has `count` messages matching `accept`. */
  const conversationWith = async (phone: string, accept: (contents: string[]) => boolean, what: string) => {
    const found = await waitFor(
      async () => {
        const person = cw.contactByPhone(phone);
        const conversation = person && cw.conversationOf(person);
        return conversation ? { conversation, messages: cw.conversationMessages(conversation.id) } : null;
      },
      (value) => value !== null && accept(value.messages.map((message) => message.content)),
      20_000,
      what,
    );
    return found!;
  };

  beforeAll(async () => {
    await stack.startAll();
    instance = await stack.connectedInstance('chatwoot');
    contact = nextPhone('5562');
    await stack.control('POST', '/sim/accounts', { phone: contact, name: 'Bruno' });
  }, 90_000);
  afterAll(() => stack.stopAll());

  describe('GET|PUT /chatwoot/config', () => {
    it('should answer the reference fields with defaults before the first PUT', async () => {
      const { status, body } = await stack.gw.call('GET', '/chatwoot/config', { token: instance.token });
      expect(status).toBe(200);
      expect(body).toMatchObject({ chatwoot_enabled: false, chatwoot_url: '', chatwoot_account_id: 0, chatwoot_inbox_id: 0, chatwoot_access_token: '' });
    });

    it.each([
      [{}, /^enabled is required/],
      [{ enabled: 'yes', url: 'https://a.example', access_token: 't', account_id: 1, inbox_id: 1 }, /^enabled must be a boolean/],
      [{ enabled: true, access_token: 't', account_id: 1, inbox_id: 1 }, /^url is required/],
      [{ enabled: true, url: 'ftp://a.example', access_token: 't', account_id: 1, inbox_id: 1 }, /^url must be an http\(s\) URL/],
      [{ enabled: true, url: 'https://a.example', account_id: 1, inbox_id: 1 }, /^access_token is required/],
      [{ enabled: true, url: 'https://a.example', access_token: 't', account_id: 0, inbox_id: 1 }, /^account_id must be a positive integer/],
      [{ enabled: true, url: 'https://a.example', access_token: 't', account_id: 1, inbox_id: '5' }, /^inbox_id must be a positive integer/],
      [{ enabled: true, url: 'https://a.example', access_token: 't', account_id: 1, inbox_id: 1, sign_messages: 1 }, /^sign_messages must be a boolean/],
      [{ enabled: true, url: 'http://10.1.2.3', access_token: 't', account_id: 1, inbox_id: 1 }, /^url refused/],
      [{ enabled: true, url: 'http://169.254.169.254/latest', access_token: 't', account_id: 1, inbox_id: 1 }, /^url refused/],
    ])('should refuse %j with a 400 naming the field', async (body, message) => {
      const response = await stack.gw.call('PUT', '/chatwoot/config', { token: instance.token, body });
      expect(response.status).toBe(400);
      expect(response.body.error).toMatch(message);
      expect((await stack.gw.call('GET', '/chatwoot/config', { token: instance.token })).body.chatwoot_enabled).toBe(false);
    });

    it('should save, answer the webhook URL, mask the token, and keep the URL across updates', async () => {
      const url = await stack.configure(instance.token, { sign_messages: true });
      expect(url).toMatch(new RegExp(`/chatwoot/webhook/${instance.id}/cw_[A-Za-z0-9_-]{32}$`));
      const { status, body } = await stack.gw.call('GET', '/chatwoot/config', { token: instance.token });
      expect(status).toBe(200);
      expect(body).toEqual({
        chatwoot_enabled: true,
        chatwoot_url: cw.baseUrl,
        chatwoot_account_id: cw.accountId,
        chatwoot_inbox_id: cw.inboxId,
        chatwoot_access_token: `${cw.token.slice(0, 4)}${'*'.repeat(cw.token.length - 4)}`,
        chatwoot_ignore_groups: false,
        chatwoot_sign_messages: true,
        chatwoot_create_new_conversation: false,
        chatwoot_inbox_webhook_url: expect.stringContaining(new URL(url).pathname),
      });
      expect(JSON.stringify(body)).not.toContain(cw.token);
      expect(await stack.configure(instance.token, { sign_messages: true })).toBe(url);
      expect((await stack.gw.call('GET', '/chatwoot/config', {})).status).toBe(401);
    });

    it('should take webhooks only at the URL it answered', async () => {
      const good = new URL(cw.webhookUrl).pathname;
      const post = (path: string, body: unknown = { event: 'conversation_updated', id: 1, status: 'open' }) => stack.gw.call('POST', path, { body });
      expect((await post(good)).status).toBe(200);
      expect((await post(`${good.slice(0, -1)}x`)).status).toBe(404);
      expect((await post(good.replace(instance.id, 'rnotaninstance1'))).status).toBe(404);
      expect((await post(`/chatwoot/webhook/${instance.id}`)).status).toBe(404);
      expect((await post(`/chatwoot/webhook/${instance.id}/`)).status).toBe(404);
      expect((await post(good, [1, 2])).status).toBe(400);
    });
  });

  describe('WhatsApp → Chatwoot', () => {
    beforeAll(() => {
      stack.startSync();
    });

    it('should create the contact (~name, phone number) and a conversation, and copy each new text once, in order', async () => {
      await say('oi, tudo bem?');
      await say('preciso de ajuda');
      const { conversation, messages } = await conversationWith(contact, (contents) => contents.length >= 2, 'two texts in Chatwoot');
      const person = cw.contactByPhone(contact)!;
      expect(person).toMatchObject({ name: '~Bruno', phone_number: `+${contact}`, identifier: `${contact}@s.whatsapp.net` });
      expect(conversation).toMatchObject({ inbox_id: cw.inboxId, status: 'open' });
      expect(messages.map((message) => [message.content, message.message_type])).toEqual([
        ['oi, tudo bem?', 'incoming'],
        ['preciso de ajuda', 'incoming'],
      ]);
      expect(messages.every((message) => /^WAID:/.test(message.source_id ?? ''))).toBe(true);
      await say('mais uma');
      await conversationWith(contact, (contents) => contents.length === 3, 'a third text in the same conversation');
      expect(cw.contacts.filter((candidate) => candidate.phone_number === `+${contact}`)).toHaveLength(1);
      expect(cw.conversations.filter((candidate) => candidate.contact_id === person.id)).toHaveLength(1);
      // Chatwoot posted message_created for each copy: none came back to WhatsApp.
      await stack.settled(instance.id);
      expect(cw.webhooks.filter((hook) => hook.body.event === 'message_created').every((hook) => hook.status === 200)).toBe(true);
      expect(await new ChatwootRepository(stack.db.dataSource).pending(instance.id)).toEqual([]);
      await sleep(300);
      expect(cw.conversationMessages(conversation.id)).toHaveLength(3);
    });
  });
  describe('Chatwoot → WhatsApp', () => {
    let conversationId: number;
    const chatOf = async () =>
      (await stack.db.dataSource.query(`SELECT lead FROM chats WHERE instance_id = $1 AND wa_chatid = $2`, [instance.id, `${contact}@s.whatsapp.net`]))[0]
        ?.lead ?? {};

    beforeAll(async () => {
      conversationId = (await conversationWith(contact, (contents) => contents.length > 0, 'the conversation')).conversation.id;
    });

    it("should send an agent's public reply once, signed, keep it out of Chatwoot as a copy, and ignore a redelivery", async () => {
      const before = cw.conversationMessages(conversationId).length;
      const webhook = await cw.agentReply(conversationId, 'Olá Bruno, como posso ajudar?');
      const waId = whatsappIdsOf(instance.id, webhook.id as number, 0).messageId;
      const entry = await stack.received(contact, waId, 15_000);
      expect(entry.message.conversation ?? entry.message.extendedTextMessage?.text).toBe('*Ana Souza:*\nOlá Bruno, como posso ajudar?');
      // Chatwoot redelivers the webhook: nothing is queued, nothing is sent again.
      expect(await cw.postWebhook(webhook)).toBe(200);
      expect(cw.webhooks.at(-1)!.status).toBe(200);
      await stack.settled(instance.id);
      await sleep(500);
      const inbox = await stack.inbox(contact, 0);
      expect(inbox.filter((item) => item.id === waId)).toHaveLength(1);
      // The sent message's own `messages` event was not copied back into the conversation.
      expect(cw.conversationMessages(conversationId)).toHaveLength(before + 1);
      // The chatbot stays silent while the agent works the conversation.
      expect((await chatOf()).chatbot_disableUntil).toBeGreaterThan(Date.now() / 1000);
    });

    it('should ignore private notes and the contact side', async () => {
      const note = await cw.agentReply(conversationId, 'nota interna', { private: true });
      await stack.settled(instance.id);
      await sleep(300);
      expect((await stack.inbox(contact, 0)).some((item) => item.id === whatsappIdsOf(instance.id, note.id as number, 0).messageId)).toBe(false);
    });

    it('should send attachments (the text as the caption) and quote what the agent replied to', async () => {
      const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
      const quoted = cw.conversationMessages(conversationId).find((message) => message.content === 'preciso de ajuda')!;
      const webhook = await cw.agentReply(conversationId, 'segue a foto', {
        attachments: [{ data: png, mimetype: 'image/png', fileName: 'foto.png' }],
        inReplyTo: quoted.id,
      });
      const entry = await stack.received(contact, whatsappIdsOf(instance.id, webhook.id as number, 0).messageId, 20_000);
      expect(entry.message.imageMessage).toMatchObject({ caption: '*Ana Souza:*\nsegue a foto', mimetype: 'image/png' });
      expect(entry.message.imageMessage.contextInfo?.stanzaId).toBe(quoted.source_id!.replace('WAID:', ''));
    });

    it('should mark the reply read in Chatwoot when the contact reads it, and delete it on WhatsApp when the agent deletes it', async () => {
      const webhook = await cw.agentReply(conversationId, 'vou apagar isto');
      const waId = whatsappIdsOf(instance.id, webhook.id as number, 0).messageId;
      await stack.received(contact, waId, 15_000);
      await stack.control('POST', `/sim/accounts/${contact}/receipts`, { chat: instance.phone, ids: [waId], type: 'read' });
      await waitFor(
        async () => cw.messages.find((message) => message.id === webhook.id)?.status,
        (status) => status === 'read',
        15_000,
        'the read status in Chatwoot',
      ).catch(async (error: Error) => {
        const jobs = await stack.db.dataSource.query(
          `SELECT kind, lane, payload, attempts, outcome, last_error FROM chatwoot_jobs WHERE kind = 'wa.update' ORDER BY id`,
        );
        const events = await stack.db.dataSource.query(`SELECT payload FROM outbox_events WHERE event_type = 'messages_update' ORDER BY id`);
        throw new Error(`${error.message}\n${JSON.stringify(jobs)}\n${JSON.stringify(events)}`);
      });
      await cw.agentDelete(webhook.id as number);
      await waitFor(
        () => stack.inbox(contact, 500),
        (inbox) => inbox.some((item) => item.message.protocolMessage?.key?.id === waId),
        15_000,
        'the revoke at the phone',
      );
    });

    it('should let the chatbot speak again once the conversation is resolved', async () => {
      await cw.agentSetStatus(conversationId, 'resolved');
      expect((await chatOf()).chatbot_disableUntil).toBe(0);
    });
  });
});
