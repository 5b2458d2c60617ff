import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { Bus, type BusHandler, type BusSubscription, type RequestOptions, type SubscribeOptions } from '@gw/bus';
import { ChatwootSync, JobKind, whatsappIdsOf } from '@gw/chatwoot';
import { ChatwootRepository, FileRepository, LidMappingRepository, openDatabase, OutboxCursorRepository } from '@gw/persistence';
import { createLogger } from '@gw/platform';
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
      [{ enabled: true, url: 'https://admin:s3cret@chatwoot.example', access_token: 't', account_id: 1, inbox_id: 1 }, /^url must not contain credentials/],
      [{ enabled: true, url: 'https://chatwoot.example/?x=1', access_token: 't', account_id: 1, inbox_id: 1 }, /^url must be the base URL of Chatwoot/],
      [{ enabled: true, url: 'https://chatwoot.example/#app', access_token: 't', account_id: 1, inbox_id: 1 }, /^url must be the base URL of Chatwoot/],
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
      // What GET answered, sent back as it was: the masked token keeps the stored one.
      const saved = await stack.gw.call('PUT', '/chatwoot/config', {
        token: instance.token,
        body: { enabled: true, url: cw.baseUrl, access_token: body.chatwoot_access_token, account_id: cw.accountId, inbox_id: cw.inboxId, sign_messages: true },
      });
      expect(saved.status).toBe(200);
      const [{ access_token: stored }] = await stack.db.dataSource.query(`SELECT access_token FROM chatwoot_configs WHERE instance_id = $1`, [instance.id]);
      expect(stored).toBe(cw.token);
      expect((await stack.gw.call('GET', '/chatwoot/config', {})).status).toBe(401);
    });

    it('should take webhooks only at the URL it answered', async () => {
      const good = new URL(cw.webhookUrl).pathname;
      const post = (path: string, body: unknown = { event: 'conversation_updated', id: 1, status: 'open' }) => stack.gw.call('POST', path, { body });
      expect((await post(good)).status).toBe(200);
      // (The secret's last character changed: one in 64 secrets ends with 'x' already.)
      expect((await post(`${good.slice(0, -1)}${good.endsWith('x') ? 'y' : 'x'}`)).status).toBe(404);
      expect((await post(good.replace(instance.id, 'rnotaninstance1'))).status).toBe(404);
      expect((await post(`/chatwoot/webhook/${instance.id}`)).status).toBe(404);
      expect((await post(`/chatwoot/webhook/${instance.id}/`)).status).toBe(404);
      expect((await post(good, [1, 2])).status).toBe(400);
    });

    it('should make guessing URLs spend the address limit for bad credentials, never the right URL', async () => {
      const good = new URL(cw.webhookUrl).pathname;
      const statuses = await Promise.all(
        Array.from({ length: 70 }, (_, n) => stack.gw.call('POST', `/chatwoot/webhook/${instance.id}/cw_guess${n}`, { body: {} }).then((r) => r.status)),
      );
      expect(statuses.filter((status) => status === 429).length).toBeGreaterThan(0);
      expect(statuses.every((status) => status === 404 || status === 429)).toBe(true);
      expect((await stack.gw.call('POST', good, { body: { event: 'conversation_updated', id: 1, status: 'open' } })).status).toBe(200);
      // A known token from the same address is not limited either (the next tests go on at once).
      expect((await stack.gw.call('GET', '/chatwoot/config', { token: instance.token })).status).toBe(200);
    });
  });

  describe('WhatsApp → Chatwoot', () => {
    beforeAll(() => {
      stack.startSync();
    });

    it('should create the contact (~name, phone number) and a conversation, and copy each new text once, in order', async () => {
      // The first message of a new Signal session can be decrypted after the next one; the bridge keeps
      // the order the gateway stored them in (the order of the webhooks), so it waits for the first here.
      await say('oi, tudo bem?');
      await conversationWith(contact, (contents) => contents.length >= 1, 'the first text in Chatwoot');
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
  describe('WhatsApp → Chatwoot, every kind', () => {
    let maria: string;
    const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
    const send = (message: Record<string, unknown>, from = maria) =>
      stack.control<{ id: string }>('POST', `/sim/accounts/${from}/send`, { to: instance.phone, message });
    const copyOf = async (waId: string) => {
      const found = await waitFor(
        async () => cw.messages.find((message) => message.source_id === `WAID:${waId}`),
        (message) => message !== undefined,
        20_000,
        `the copy of ${waId}`,
      );
      return found!;
    };

    beforeAll(async () => {
      maria = nextPhone('5563');
      await stack.control('POST', '/sim/accounts', { phone: maria, name: 'Maria' });
    });

    it('should copy media as an attachment with its caption', async () => {
      const sent = await stack.control<{ id: string }>('POST', `/sim/accounts/${maria}/send-media`, {
        to: instance.phone,
        type: 'image',
        data: png.toString('base64'),
        mimetype: 'image/png',
        caption: 'olha a foto',
      });
      const copy = await copyOf(sent.id);
      expect(copy).toMatchObject({ content: 'olha a foto', message_type: 'incoming', content_attributes: {} });
      expect(copy.attachments).toHaveLength(1);
      expect(copy.attachments[0]).toMatchObject({ file_type: 'image', mimetype: 'image/png' });
      expect(copy.attachments[0].data.equals(png)).toBe(true);
    });

    it('should copy a voice note and a video as audio and video attachments, bytes and caption kept', async () => {
      const voice = Buffer.from('OggS\0\x02voice-note-bytes');
      const video = Buffer.from('\0\0\0\x18ftypmp42video-bytes');
      const ptt = await stack.control<{ id: string }>('POST', `/sim/accounts/${maria}/send-media`, {
        to: instance.phone,
        type: 'audio',
        data: voice.toString('base64'),
        mimetype: 'audio/ogg; codecs=opus',
        ptt: true,
        seconds: 3,
      });
      const clip = await stack.control<{ id: string }>('POST', `/sim/accounts/${maria}/send-media`, {
        to: instance.phone,
        type: 'video',
        data: video.toString('base64'),
        mimetype: 'video/mp4',
        caption: 'o vídeo',
      });
      const [voiceCopy, videoCopy] = [await copyOf(ptt.id), await copyOf(clip.id)];
      expect(voiceCopy).toMatchObject({ content: '', message_type: 'incoming' });
      expect(voiceCopy.attachments).toHaveLength(1);
      expect(voiceCopy.attachments[0]).toMatchObject({ file_type: 'audio' });
      expect(voiceCopy.attachments[0].mimetype).toMatch(/^audio\/ogg/);
      expect(voiceCopy.attachments[0].data.equals(voice)).toBe(true);
      expect(videoCopy).toMatchObject({ content: 'o vídeo', message_type: 'incoming' });
      expect(videoCopy.attachments[0]).toMatchObject({ file_type: 'video', mimetype: 'video/mp4' });
      expect(videoCopy.attachments[0].data.equals(video)).toBe(true);
    });

    it('should copy a location, a contact card, a reply with its context and a reaction to the message it reacts to', async () => {
      const location = await send({ locationMessage: { degreesLatitude: -23.55, degreesLongitude: -46.63, name: 'Loja', address: 'Av. Paulista, 1000' } });
      expect((await copyOf(location.id)).content).toBe('📍 Location\nLoja\nAv. Paulista, 1000\nhttps://www.google.com/maps?q=-23.55,-46.63');
      const card = await send({
        contactMessage: { displayName: 'João', vcard: 'BEGIN:VCARD\nVERSION:3.0\nFN:João\nTEL;type=CELL;waid=5511988887777:+55 11 98888-7777\nEND:VCARD' },
      });
      expect((await copyOf(card.id)).content).toBe('👤 João\n+55 11 98888-7777');
      const first = await send({ conversation: 'primeira' });
      const firstCopy = await copyOf(first.id);
      const reply = await send({
        extendedTextMessage: {
          text: 'respondendo',
          contextInfo: { stanzaId: first.id, participant: `${maria}@s.whatsapp.net`, quotedMessage: { conversation: 'primeira' } },
        },
      });
      expect(await copyOf(reply.id)).toMatchObject({ content: 'respondendo', content_attributes: { in_reply_to: firstCopy.id } });
      const reaction = await send({ reactionMessage: { key: { remoteJid: `${instance.phone}@s.whatsapp.net`, fromMe: false, id: first.id }, text: '👍' } });
      expect(await copyOf(reaction.id)).toMatchObject({ content: '👍', content_attributes: { in_reply_to: firstCopy.id, is_reaction: true } });
    });

    it('should copy a document with its file name, and an edit as a reply to the original', async () => {
      const pdf = Buffer.from('%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n');
      const doc = await stack.control<{ id: string }>('POST', `/sim/accounts/${maria}/send-media`, {
        to: instance.phone,
        type: 'document',
        data: pdf.toString('base64'),
        mimetype: 'application/pdf',
        fileName: 'orcamento.pdf',
      });
      const docCopy = await copyOf(doc.id);
      expect(docCopy.attachments[0]).toMatchObject({ fileName: 'orcamento.pdf', mimetype: 'application/pdf', file_type: 'file' });
      expect(docCopy.attachments[0].data.equals(pdf)).toBe(true);
      const original = await send({ conversation: 'reuniao as 3' });
      const originalCopy = await copyOf(original.id);
      await send({
        protocolMessage: {
          type: 14,
          key: { remoteJid: `${instance.phone}@s.whatsapp.net`, fromMe: true, id: original.id },
          editedMessage: { conversation: 'reunião às 15h' },
        },
      });
      const edit = await waitFor(
        async () => cw.messages.find((message) => message.content === '✏️ reunião às 15h'),
        (found) => found !== undefined,
        20_000,
        'the edit in Chatwoot',
      );
      expect(edit!.content_attributes).toMatchObject({ in_reply_to: originalCopy.id });
    });

    it('should delete the copy when the contact deletes the message for everyone', async () => {
      const gone = await send({ conversation: 'mandei errado' });
      const copy = await copyOf(gone.id);
      await send({ protocolMessage: { type: 0, key: { remoteJid: `${instance.phone}@s.whatsapp.net`, fromMe: true, id: gone.id } } });
      await waitFor(
        async () => copy.content_attributes.deleted,
        (deleted) => deleted === true,
        20_000,
        'the copy deleted in Chatwoot',
      );
      expect(copy.content).toBe('This message was deleted');
    });

    it('should copy nothing of what happens while the bridge is off, only what comes after it is on again', async () => {
      await stack.configure(instance.token, { sign_messages: true, enabled: false });
      const whileOff = await send({ conversation: 'enquanto desligado' });
      // Its event is in the outbox (committed) before the bridge is on again: the cursor then starts after it.
      await waitFor(
        () =>
          stack.db.dataSource.query(
            `SELECT 1 FROM outbox_events WHERE instance_id = $1 AND event_type = 'messages' AND payload->'message'->>'messageid' = $2`,
            [instance.id, whileOff.id],
          ),
        (rows) => rows.length > 0,
        15_000,
        'the message event in the outbox',
      );
      await stack.configure(instance.token, { sign_messages: true });
      const afterwards = await send({ conversation: 'ligado de novo' });
      await copyOf(afterwards.id);
      await stack.settled(instance.id);
      expect(cw.messages.some((message) => message.source_id === `WAID:${whileOff.id}`)).toBe(false);
      const jobs = await stack.db.dataSource.query(`SELECT 1 FROM chatwoot_jobs WHERE instance_id = $1 AND payload->'message'->>'messageid' = $2`, [
        instance.id,
        whileOff.id,
      ]);
      expect(jobs).toEqual([]);
    });

    it('should copy what the instance sends (from the API or the phone) as outgoing', async () => {
      const { status, body } = await stack.gw.call('POST', '/send/text', { token: instance.token, body: { number: maria, text: 'enviado pela API' } });
      expect(status).toBe(200);
      expect(await copyOf(body.messageid)).toMatchObject({ content: 'enviado pela API', message_type: 'outgoing', private: false });
      const fromPhone = await stack.control<{ id: string }>('POST', `/sim/accounts/${instance.phone}/send`, { to: maria, text: 'enviado do celular' });
      expect(await copyOf(fromPhone.id)).toMatchObject({ content: 'enviado do celular', message_type: 'outgoing' });
      const person = cw.contactByPhone(maria)!;
      expect(person.name).toBe('~Maria');
      expect(cw.conversations.filter((conversation) => conversation.contact_id === person.id)).toHaveLength(1);
    });

    it('should copy group messages into the group contact, naming the sender, and skip groups with ignore_groups', async () => {
      const group = await stack.control<{ jid: string }>('POST', '/sim/groups', { creator: maria, subject: 'Turma', participants: [instance.phone] });
      await sleep(500);
      const first = await stack.control<{ id: string }>('POST', `/sim/accounts/${maria}/send`, { to: group.jid, text: 'oi grupo' });
      const copy = await copyOf(first.id);
      expect(copy.content).toBe('**Maria:**\noi grupo');
      const conversation = cw.conversations.find((candidate) => candidate.id === copy.conversation_id)!;
      expect(cw.contacts.find((candidate) => candidate.id === conversation.contact_id)).toMatchObject({
        name: '~Turma (GROUP)',
        identifier: group.jid,
        phone_number: null,
      });
      // An agent's reply in the group's conversation goes to the group.
      const reply = await cw.agentReply(copy.conversation_id, 'resposta no grupo');
      const entry = await stack.received(maria, whatsappIdsOf(instance.id, reply.id as number, 0).messageId, 15_000);
      expect(entry).toMatchObject({ to: group.jid, from: `${instance.phone}@s.whatsapp.net` });
      await stack.configure(instance.token, { sign_messages: true, ignore_groups: true });
      const skipped = await stack.control<{ id: string }>('POST', `/sim/accounts/${maria}/send`, { to: group.jid, text: 'ninguém copia' });
      const direct = await send({ conversation: 'mas o privado sim' });
      await copyOf(direct.id);
      await stack.settled(instance.id);
      expect(cw.messages.some((message) => message.source_id === `WAID:${skipped.id}`)).toBe(false);
      await stack.configure(instance.token, { sign_messages: true });
    });

    it('should reuse a resolved conversation, or open a new one with create_new_conversation', async () => {
      const person = cw.contactByPhone(maria)!;
      const current = cw.conversationOf(person)!;
      await cw.agentSetStatus(current.id, 'resolved');
      const again = await send({ conversation: 'voltei' });
      expect((await copyOf(again.id)).conversation_id).toBe(current.id);
      await stack.configure(instance.token, { sign_messages: true, create_new_conversation: true });
      await cw.agentSetStatus(current.id, 'resolved');
      const fresh = await send({ conversation: 'outro assunto' });
      const copy = await copyOf(fresh.id);
      expect(copy.conversation_id).not.toBe(current.id);
      const next = await send({ conversation: 'continuando' });
      expect((await copyOf(next.id)).conversation_id).toBe(copy.conversation_id);
      await stack.configure(instance.token, { sign_messages: true });
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

    it('should not send again when a send job runs a second time (a runner that died after sending)', async () => {
      const webhook = await cw.agentReply(conversationId, 'só uma vez');
      const waId = whatsappIdsOf(instance.id, webhook.id as number, 0).messageId;
      await stack.received(contact, waId, 15_000);
      await stack.settled(instance.id);
      // As if the runner had died between the send and recording it: the job is due again, its attempt counted.
      await stack.db.dataSource.query(`UPDATE chatwoot_jobs SET done_at = NULL, claimed_by = NULL, claimed_until = NULL, attempts = 1 WHERE dedupe_key = $1`, [
        `cw:${webhook.id}:send`,
      ]);
      await stack.settled(instance.id);
      await sleep(500);
      expect((await stack.inbox(contact, 0)).filter((item) => item.id === waId)).toHaveLength(1);
      const [job] = await stack.db.dataSource.query(`SELECT attempts, outcome FROM chatwoot_jobs WHERE dedupe_key = $1`, [`cw:${webhook.id}:send`]);
      expect(job).toEqual({ attempts: 2, outcome: 'done' });
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

    it("should send an agent's audio and video (the text as the video's caption, audio takes none), and the text alone before an audio-only reply", async () => {
      const media = (phone: string, id: string) =>
        fetch(`${stack.sim.controlUrl}/sim/accounts/${phone}/inbox/${id}/media`).then(async (response) => Buffer.from(await response.arrayBuffer()));
      const audio = Buffer.from('OggS\0\x02agent-audio');
      const video = Buffer.from('\0\0\0\x18ftypmp42agent-video');
      const both = await cw.agentReply(conversationId, 'escute e veja', {
        attachments: [
          { data: audio, mimetype: 'audio/ogg', fileName: 'audio.ogg' },
          { data: video, mimetype: 'video/mp4', fileName: 'video.mp4' },
        ],
      });
      const [first, second] = [0, 1].map((part) => whatsappIdsOf(instance.id, both.id as number, part).messageId);
      const sound = await stack.received(contact, first, 20_000);
      const clip = await stack.received(contact, second, 20_000);
      expect(sound.message.audioMessage).toMatchObject({ mimetype: 'audio/ogg' });
      expect(clip.message.videoMessage).toMatchObject({ caption: '*Ana Souza:*\nescute e veja', mimetype: 'video/mp4' });
      expect((await media(contact, first)).equals(audio)).toBe(true);
      expect((await media(contact, second)).equals(video)).toBe(true);

      const only = await cw.agentReply(conversationId, 'só o áudio', { attachments: [{ data: audio, mimetype: 'audio/ogg', fileName: 'audio.ogg' }] });
      const [text, sound2] = [0, 1].map((part) => whatsappIdsOf(instance.id, only.id as number, part).messageId);
      const alone = await stack.received(contact, text, 20_000);
      expect(alone.message.conversation ?? alone.message.extendedTextMessage?.text).toBe('*Ana Souza:*\nsó o áudio');
      expect((await stack.received(contact, sound2, 20_000)).message.audioMessage).toBeDefined();
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
  describe('contacts that change', () => {
    let dora: string;
    const sent = (from: string, text: string) => say(text, from);
    const copies = (text: string) => cw.messages.filter((message) => message.content === text);
    /** Waits until `text` has exactly one copy in Chatwoot. */
    const copiedOnce = (text: string, what: string) =>
      waitFor(
        async () => copies(text),
        (found) => found.length === 1,
        20_000,
        what,
      );

    beforeAll(async () => {
      dora = nextPhone('5565');
      await stack.control('POST', '/sim/accounts', { phone: dora, name: 'Dora' });
      await sent(dora, 'primeiro contato');
      await copiedOnce('primeiro contato', 'the first copy');
    });

    it('should keep a chat known by its LID as the same contact and conversation once its number is known (LID → PN)', async () => {
      const person = cw.contactByPhone(dora)!;
      const conversation = cw.conversationOf(person)!;
      const [{ lid }] = await stack.db.dataSource.query(`SELECT lid FROM lid_mappings WHERE instance_id = $1 AND pn = $2`, [
        instance.id,
        `${dora}@s.whatsapp.net`,
      ]);
      // As the bridge had it when only the LID was known: the contact without a number, the chat under its LID.
      await stack.db.dataSource.query(`UPDATE chatwoot_chats SET chat_key = $3 WHERE instance_id = $1 AND chat_key = $2`, [
        instance.id,
        `${dora}@s.whatsapp.net`,
        lid,
      ]);
      person.phone_number = null;
      person.identifier = lid;
      await sent(dora, 'agora com número');
      await copiedOnce('agora com número', 'the copy after LID → PN');
      expect(copies('agora com número')[0].conversation_id).toBe(conversation.id);
      expect(person).toMatchObject({ phone_number: `+${dora}`, identifier: `${dora}@s.whatsapp.net` });
      expect(cw.contacts.filter((candidate) => candidate.name === '~Dora')).toHaveLength(1);
      const keys = await stack.db.dataSource.query(`SELECT chat_key FROM chatwoot_chats WHERE instance_id = $1 AND contact_id = $2`, [instance.id, person.id]);
      expect(keys).toEqual([{ chat_key: `${dora}@s.whatsapp.net` }]);
    });

    it('should keep a ~name following the WhatsApp name, and leave a name an agent set', async () => {
      await stack.control('POST', '/sim/accounts', { phone: dora, name: 'Dora Lima' });
      await sent(dora, 'mudei de nome');
      await copiedOnce('mudei de nome', 'the copy after the rename');
      const person = cw.contactByPhone(dora)!;
      expect(person.name).toBe('~Dora Lima');
      person.name = 'Dora (cliente VIP)';
      await stack.control('POST', '/sim/accounts', { phone: dora, name: 'Dora L.' });
      await sent(dora, 'de novo');
      await copiedOnce('de novo', 'the copy after the second rename');
      expect(person.name).toBe('Dora (cliente VIP)');
    });

    it('should find or create the contact again when it was deleted in Chatwoot', async () => {
      const before = cw.contactByPhone(dora)!;
      cw.deleteContact(before.id);
      await sent(dora, 'ainda aqui');
      await copiedOnce('ainda aqui', 'the copy after the contact was deleted');
      const after = cw.contactByPhone(dora)!;
      expect(after.id).not.toBe(before.id);
      expect(copies('ainda aqui')[0].conversation_id).toBe(cw.conversationOf(after)!.id);
      await stack.settled(instance.id);
      expect(copies('ainda aqui')).toHaveLength(1);
    });

    it('should open a new conversation for the contact when the one it used was deleted in Chatwoot', async () => {
      const person = cw.contactByPhone(dora)!;
      const before = cw.conversationOf(person)!;
      cw.deleteConversation(before.id);
      await sent(dora, 'depois de apagar a conversa');
      await copiedOnce('depois de apagar a conversa', 'the copy after the conversation was deleted');
      const after = cw.conversationOf(person)!;
      expect(after.id).not.toBe(before.id);
      expect(copies('depois de apagar a conversa')[0].conversation_id).toBe(after.id);
      expect(cw.contacts.filter((candidate) => candidate.phone_number === `+${dora}`)).toHaveLength(1);
      await stack.settled(instance.id);
    });

    it("should wait as long as a 429's Retry-After asks, then copy once", async () => {
      cw.tooManyRequests = 1;
      cw.retryAfterSeconds = 1;
      const from = cw.requests.length;
      await sent(dora, 'com calma');
      await copiedOnce('com calma', 'the copy after the 429');
      const calls = cw.requests.slice(from);
      // The first call was refused; the next came after the second asked for, not the 200 ms of the test's retry schedule.
      expect(calls[1].at - calls[0].at).toBeGreaterThanOrEqual(950);
      await stack.settled(instance.id);
      expect(copies('com calma')).toHaveLength(1);
    });

    it("should make one contact when a new chat's LID lane and number lane run at once (LID known before its number)", async () => {
      // Received while only the LID was known (its lane is the LID's), then after the number was learned
      // (the number's lane, the LID beside it): two lanes, run side by side, searching a slow Chatwoot at once.
      const phone = nextPhone('5566');
      const pn = `${phone}@s.whatsapp.net`;
      const lid = `9${phone.slice(-10)}01@lid`;
      const job = (text: string, chat: Record<string, unknown>) => ({
        lane: `wa:${String(chat.wa_chatid)}`,
        kind: JobKind.WaMessage,
        dedupeKey: `race:${text}`,
        payload: {
          message: {
            messageid: `3A${phone}${text.length}`,
            chatid: chat.wa_chatid,
            fromMe: false,
            isGroup: false,
            messageType: 'Conversation',
            type: 'text',
            text,
            senderName: 'Elisa',
          },
          chat: { ...chat, wa_name: 'Elisa' },
        },
      });
      cw.searchDelayMs = 300;
      try {
        await stack.db.dataSource.transaction((manager) =>
          new ChatwootRepository(stack.db.dataSource)
            .within(manager)
            .enqueue(instance.id, [job('pela lid', { wa_chatid: lid }), job('pelo número', { wa_chatid: pn, wa_chatlid: lid })]),
        );
        stack.sync!.poke();
        await waitFor(
          async () => [...copies('pela lid'), ...copies('pelo número')],
          (found) => found.length === 2,
          20_000,
          'both copies',
        );
        await stack.settled(instance.id);
      } finally {
        cw.searchDelayMs = 0;
      }
      const elisas = cw.contacts.filter((candidate) => candidate.name === '~Elisa');
      expect(elisas).toHaveLength(1);
      expect(elisas[0]).toMatchObject({ phone_number: `+${phone}`, identifier: pn });
      expect(copies('pela lid')[0].conversation_id).toBe(copies('pelo número')[0].conversation_id);
      expect(cw.conversations.filter((candidate) => candidate.contact_id === elisas[0].id)).toHaveLength(1);
      const keys = await stack.db.dataSource.query(`SELECT chat_key, lid FROM chatwoot_chats WHERE instance_id = $1 AND contact_id = $2`, [
        instance.id,
        elisas[0].id,
      ]);
      expect(keys).toEqual([{ chat_key: pn, lid }]);
      // A later message naming the chat only by its LID (its number still unmapped here) finds the same conversation.
      await stack.db.dataSource.transaction((manager) =>
        new ChatwootRepository(stack.db.dataSource)
          .within(manager)
          .enqueue(instance.id, [{ ...job('de novo pela lid', { wa_chatid: lid }), dedupeKey: 'race:again' }]),
      );
      stack.sync!.poke();
      await copiedOnce('de novo pela lid', 'the later LID copy');
      expect(copies('de novo pela lid')[0].conversation_id).toBe(copies('pelo número')[0].conversation_id);
    });
  });

  describe('outages, retried calls and a runner killed mid-sync', () => {
    let carla: string;
    const texts = () => {
      const person = cw.contactByPhone(carla);
      const conversation = person && cw.conversationOf(person);
      return conversation ? cw.conversationMessages(conversation.id).map((message) => message.content) : [];
    };
    /** Sends each text from Carla's phone once the one before is stored, so the stored order is the sent order. */
    const sayInOrder = async (list: string[]) => {
      for (const text of list) {
        const { id } = await say(text, carla);
        await waitFor(
          () => stack.db.dataSource.query(`SELECT 1 FROM messages WHERE instance_id = $1 AND message_id = $2`, [instance.id, id]),
          (rows) => rows.length > 0,
          15_000,
          `${text} stored`,
        );
      }
    };
    const arrived = (expected: string[]) =>
      waitFor(
        async () => texts(),
        (contents) => contents.length >= expected.length,
        30_000,
        `${expected.join(', ')} in Chatwoot`,
      );

    beforeAll(async () => {
      carla = nextPhone('5564');
      await stack.control('POST', '/sim/accounts', { phone: carla, name: 'Carla' });
      await say('olá', carla);
      await arrived(['olá']);
    });

    it('should lose nothing and keep the order while Chatwoot is down, then catch up', async () => {
      cw.down = true;
      await sayInOrder(['um', 'dois', 'três']);
      const repository = new ChatwootRepository(stack.db.dataSource);
      await waitFor(
        () => repository.pending(instance.id),
        (pending) => pending.length === 3 && pending[0].attempts >= 2,
        15_000,
        'retries while down',
      );
      expect((await repository.pending(instance.id))[0].lastError).toMatch(/503/);
      cw.down = false;
      await arrived(['olá', 'um', 'dois', 'três']);
      await stack.settled(instance.id);
      expect(texts()).toEqual(['olá', 'um', 'dois', 'três']);
    });

    it('should not copy twice when Chatwoot stored the message but the answer was lost', async () => {
      cw.failCreatesAfterWriting = 1;
      await sayInOrder(['quatro']);
      await stack.settled(instance.id);
      await sleep(300);
      expect(texts().filter((text) => text === 'quatro')).toHaveLength(1);
      expect(cw.requests.some((request) => request.method === 'GET' && /\/conversations\/\d+\/messages$/.test(request.path))).toBe(true);
    });

    it('should lose nothing and copy nothing twice when the process running the sync is killed (-9) mid-sync', async () => {
      await stack.sync!.stop();
      const config = JSON.stringify({ ...ChatwootStack.syncConfig({ runnerId: 'child', claimMs: 1_500 }), ssrf: undefined });
      const child: ChildProcess = spawn(
        process.execPath,
        [join(__dirname, 'support/ts-child.js'), join(__dirname, 'support/chatwoot-runner.child.ts'), stack.db.url, stack.db.schema, config],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      );
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      try {
        await new Promise<void>((resolve, reject) => {
          child.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('ready') && resolve());
          child.once('exit', (code) => reject(new Error(`child exited ${code}`)));
        });
        // Chatwoot stores the next copy and holds its answer: the child dies between Chatwoot's write and its own.
        cw.holdCreatesAfterWriting = true;
        await sayInOrder(['cinco', 'seis']);
        await arrived(['olá', 'um', 'dois', 'três', 'quatro', 'cinco']);
        child.kill('SIGKILL');
        await exited;
      } finally {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
        cw.release();
      }
      stack.startSync({ claimMs: 1_500 });
      await arrived(['olá', 'um', 'dois', 'três', 'quatro', 'cinco', 'seis']);
      await stack.settled(instance.id);
      await sleep(300);
      expect(texts()).toEqual(['olá', 'um', 'dois', 'três', 'quatro', 'cinco', 'seis']);
    });

    it("should send an agent's reply once when the runner dies right after WhatsApp took it (its claim lapses, another runner retries)", async () => {
      await stack.sync!.stop();
      const ds = stack.db.dataSource;
      // A runner that dies the moment the worker has sent its message: the job stays claimed, never
      // finished, and its claim is no longer renewed (its database connections are gone with it).
      const dying = new DyingBus(stack.bus);
      const own = await openDatabase({ url: stack.db.url, schema: stack.db.schema, poolSize: 3 });
      const doomed = new ChatwootSync(
        new OutboxCursorRepository(own),
        new ChatwootRepository(own),
        new LidMappingRepository(own),
        new FileRepository(own),
        dying,
        ChatwootStack.syncConfig({ runnerId: 'doomed', claimMs: 1_000 }),
        createLogger('chatwoot-doomed', process.env.TEST_LOG_LEVEL ?? 'silent'),
      );
      doomed.start();
      let waId = '';
      let cwMessageId = 0;
      try {
        const conversation = cw.conversationOf(cw.contactByPhone(carla)!)!;
        const webhook = await cw.agentReply(conversation.id, 'resposta antes da queda');
        cwMessageId = webhook.id as number;
        waId = whatsappIdsOf(instance.id, cwMessageId, 0).messageId;
        await stack.received(carla, waId, 20_000);
        await waitFor(
          async () => dying.sent,
          (sent) => sent === 1,
          10_000,
          'the doomed runner to die after its send',
        );
      } finally {
        void doomed.stop(); // (its loop never ends: it is dead)
        await own.destroy();
      }
      const job = () =>
        ds.query(`SELECT attempts, outcome, done_at FROM chatwoot_jobs WHERE instance_id = $1 AND dedupe_key = $2`, [instance.id, `cw:${cwMessageId}:send`]);
      expect(await job()).toEqual([expect.objectContaining({ attempts: 1, done_at: null })]);
      stack.startSync({ claimMs: 1_000 });
      await stack.settled(instance.id);
      expect(await job()).toEqual([expect.objectContaining({ attempts: 2, outcome: 'done' })]);
      await sleep(300);
      expect((await stack.inbox(carla, 500)).filter((entry) => entry.id === waId)).toHaveLength(1);
      expect(cw.messages.filter((message) => message.content === 'resposta antes da queda')).toHaveLength(1);
    });

    it('should not copy twice when a call to Chatwoot outlasts the claim (the claim is renewed while the job runs)', async () => {
      await stack.sync!.stop();
      stack.startSync({ claimMs: 600 });
      // A second runner (another process's) beside it, which would take over a lapsed claim.
      const ds = stack.db.dataSource;
      const other = new ChatwootSync(
        new OutboxCursorRepository(ds),
        new ChatwootRepository(ds),
        new LidMappingRepository(ds),
        new FileRepository(ds),
        stack.bus,
        ChatwootStack.syncConfig({ runnerId: 'other', claimMs: 600 }),
        createLogger('chatwoot-other', process.env.TEST_LOG_LEVEL ?? 'silent'),
      );
      other.start();
      const before = cw.requests.length;
      cw.hang();
      try {
        await sayInOrder(['devagar']);
        await waitFor(
          async () => cw.requests.length,
          (count) => count > before,
          10_000,
          'a call held',
        );
        // Held three claim lengths: without renewal the other runner would take the lapsed job and copy it a second time.
        await sleep(1_800);
      } finally {
        cw.release();
      }
      await stack.settled(instance.id);
      await other.stop();
      expect(texts().filter((text) => text === 'devagar')).toHaveLength(1);
      const [job] = await stack.db.dataSource.query(`SELECT attempts FROM chatwoot_jobs WHERE instance_id = $1 AND payload->'message'->>'text' = 'devagar'`, [
        instance.id,
      ]);
      expect(job).toEqual({ attempts: 1 });
    });
  });
});

/** The bus of a runner that dies right after the worker answered its send: that answer (and everything after) never comes. */
class DyingBus extends Bus {
  sent = 0;

  constructor(private readonly shared: Bus) {
    super();
  }

  async request<T>(subject: string, data: unknown, options: RequestOptions): Promise<T> {
    const reply = await this.shared.request<T>(subject, data, options);
    if (!subject.endsWith('.send')) return reply;
    this.sent++;
    return new Promise<T>(() => undefined);
  }

  publish(subject: string, data: unknown): void {
    this.shared.publish(subject, data);
  }

  subscribe(subject: string, handler: BusHandler, options?: SubscribeOptions): BusSubscription {
    return this.shared.subscribe(subject, handler, options);
  }

  ping(): Promise<void> {
    return this.shared.ping();
  }

  async close(): Promise<void> {}
}
