import { createHash, randomBytes } from 'node:crypto';
import { MessageRepository, type NewMessage } from '@gw/persistence';
import { newMessageFixture } from '@gw/testing';
import { BufferJSON, decryptPollVote } from '@whiskeysockets/baileys';
import { nextPhone, Stack } from './support/stack';

/** Interactive sends through the whole stack; the receiving simulated phone decodes each message. */
describe('interactive send endpoints (HTTP → worker → Baileys → simulated phone)', () => {
  const stack = new Stack();
  let token: string;
  let instanceId: string;
  let ownPhone: string;
  let contact: string;

  const received = (messageId: string) => stack.received(contact, messageId);
  const post = (path: string, body: Record<string, unknown>) => stack.gw.call('POST', path, { token, body });
  const sent = async (path: string, body: Record<string, unknown>) => {
    const response = await post(path, { number: contact, ...body });
    if (response.status !== 200) throw new Error(`${path} → ${response.status} ${JSON.stringify(response.body)}`);
    return { record: response.body, message: (await received(response.body.messageid)).message };
  };
  const interactiveOf = (message: Record<string, any>) => message.viewOnceMessage?.message?.interactiveMessage;
  const params = (button: { buttonParamsJson: string }) => JSON.parse(button.buttonParamsJson || '{}');

  /** A message as the inbound pipeline stores it (used for originals the phone would send). */
  const store = async (fields: Partial<NewMessage> & { messageId: string; messageType: string }) => {
    const message = newMessageFixture(instanceId, {
      chatId: `${contact}@s.whatsapp.net`,
      sender: `${contact}@s.whatsapp.net`,
      senderPn: `${contact}@s.whatsapp.net`,
      senderName: 'Cliente',
      fromMe: false,
      type: 'media',
      source: 'android',
      status: 'Delivered',
      text: '',
      content: {},
      wasSentByApi: false,
      sendFunction: '',
      sendPayload: null,
      ...fields,
    });
    await stack.db.dataSource.transaction((manager) => new MessageRepository(stack.db.dataSource).within(manager).upsert(message));
  };

  beforeAll(async () => {
    await stack.start();
    ({ token, id: instanceId, phone: ownPhone } = await stack.connectedInstance('interactive'));
    contact = nextPhone('5541');
    await stack.control('POST', '/sim/accounts', { phone: contact, name: 'Cliente' });
  }, 60_000);

  afterAll(async () => {
    await stack.stop();
  });

  describe('POST /send/menu', () => {
    it('should send a poll with its options and a 32-byte message secret', async () => {
      const { record, message } = await sent('/send/menu', { type: 'poll', text: 'Best day?', choices: ['Mon', 'Tue', 'Wed'] });
      expect(record).toMatchObject({ fromMe: true, status: 'Sent', messageType: 'PollCreationMessageV3', sendFunction: 'SendMenuMessage' });
      expect(message.pollCreationMessageV3).toMatchObject({
        name: 'Best day?',
        options: [{ optionName: 'Mon' }, { optionName: 'Tue' }, { optionName: 'Wed' }],
        selectableOptionsCount: 1,
      });
      expect(Buffer.from(message.messageContextInfo.messageSecret, 'base64')).toHaveLength(32);
      const multi = await sent('/send/menu', { type: 'poll', text: 'Pick', choices: ['a', 'b', 'c'], selectableCount: 2 });
      expect(multi.message.pollCreationMessage).toMatchObject({ selectableOptionsCount: 2 });
    });

    it('should send a list with its sections and rows', async () => {
      const { message } = await sent('/send/menu', {
        type: 'list',
        text: 'Our menu',
        listButton: 'See options',
        footerText: 'Shop',
        choices: ['[Drinks]', 'Coffee|c1|Hot coffee', 'Tea|t1', '[Food]', 'Cake'],
      });
      expect(message.listMessage).toMatchObject({
        description: 'Our menu',
        buttonText: 'See options',
        footerText: 'Shop',
        sections: [
          {
            title: 'Drinks',
            rows: [
              { title: 'Coffee', rowId: 'c1', description: 'Hot coffee' },
              { title: 'Tea', rowId: 't1' },
            ],
          },
          { title: 'Food', rows: [{ title: 'Cake', rowId: 'Cake' }] },
        ],
      });
    });

    it('should send native flow buttons (quick reply, URL, call, copy)', async () => {
      const { message } = await sent('/send/menu', {
        type: 'button',
        text: 'Choose',
        footerText: 'ft',
        choices: ['Yes|yes-1', 'Site|https://example.com', 'Call|call:+5511999998888', 'Code|copy:XYZ'],
      });
      const interactive = interactiveOf(message);
      expect(interactive).toMatchObject({ body: { text: 'Choose' }, footer: { text: 'ft' } });
      const buttons = interactive.nativeFlowMessage.buttons;
      expect(buttons.map((button: { name: string }) => button.name)).toEqual(['quick_reply', 'cta_url', 'cta_call', 'cta_copy']);
      expect(params(buttons[0])).toEqual({ display_text: 'Yes', id: 'yes-1' });
      expect(params(buttons[1]).url).toBe('https://example.com');
      expect(params(buttons[2]).phone_number).toBe('+5511999998888');
      expect(params(buttons[3]).copy_code).toBe('XYZ');
    });

    it('should send a carousel menu', async () => {
      const { message } = await sent('/send/menu', {
        type: 'carousel',
        text: 'Catalog',
        choices: [
          '[Shirt\nR$ 10]',
          '{iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==}',
          'Buy|buy-shirt',
          '[Cap]',
          'Site|https://example.com/cap',
        ],
      });
      const cards = interactiveOf(message).carouselMessage.cards;
      expect(cards.map((card: any) => card.body.text)).toEqual(['Shirt', 'Cap']);
      expect(params(cards[0].nativeFlowMessage.buttons[0])).toEqual({ display_text: 'Buy', id: 'buy-shirt' });
      expect(cards[1].nativeFlowMessage.buttons[0].name).toBe('cta_url');
    });

    it('should refuse menus that cannot be sent', async () => {
      expect(await post('/send/menu', { number: contact, type: 'poll', text: 'x', choices: ['only'] })).toEqual({
        status: 400,
        body: { error: 'a poll needs at least 2 options' },
      });
      expect(await post('/send/menu', { number: contact, type: 'list', text: 'x', choices: ['[Section]'] })).toEqual({
        status: 400,
        body: { error: 'a list needs at least one item (a [section] alone does not count)' },
      });
      expect(await post('/send/menu', { number: contact, type: 'button', text: 'x', choices: [] })).toEqual({
        status: 400,
        body: { error: 'missing choices' },
      });
      expect((await post('/send/menu', { number: contact, type: 'nope', text: 'x', choices: ['a'] })).status).toBe(400);
      expect(await post('/send/menu', { number: contact, type: 'poll', choices: ['a', 'b'] })).toEqual({ status: 400, body: { error: 'missing text' } });
      expect((await post('/send/menu', { number: contact, type: 'poll', text: 'x', choices: ['a', 'b'], selectableCount: 5 })).body.error).toMatch(
        /selectableCount/,
      );
    });
  });

  describe('POST /send/carousel', () => {
    it('should send cards with REPLY, URL, CALL and COPY buttons', async () => {
      const { record, message } = await sent('/send/carousel', {
        text: 'Offers',
        carousel: [
          {
            text: 'Card one',
            image: 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
            buttons: [
              { id: 'c1', text: 'Want', type: 'REPLY' },
              { id: 'https://example.com', text: 'Site', type: 'URL' },
            ],
          },
          {
            text: 'Card two',
            buttons: [
              { id: '+5511999998888', text: 'Call', type: 'CALL' },
              { id: 'PROMO', text: 'Copy', type: 'COPY' },
            ],
          },
        ],
      });
      expect(record.sendFunction).toBe('SendCarouselMessage');
      const interactive = interactiveOf(message);
      expect(interactive.body.text).toBe('Offers');
      const names = interactive.carouselMessage.cards.map((card: any) => card.nativeFlowMessage.buttons.map((button: { name: string }) => button.name));
      expect(names).toEqual([
        ['quick_reply', 'cta_url'],
        ['cta_call', 'cta_copy'],
      ]);
      expect(params(interactive.carouselMessage.cards[1].nativeFlowMessage.buttons[1]).copy_code).toBe('PROMO');
    });

    it('should refuse a carousel without cards or with bad buttons', async () => {
      expect((await post('/send/carousel', { number: contact, text: 'x', carousel: [] })).body.error).toMatch(/carousel/);
      expect(await post('/send/carousel', { number: contact, text: 'x', carousel: [{ text: 'a', buttons: [{ text: 'b', type: 'FAX' }] }] })).toEqual({
        status: 400,
        body: { error: 'carousel[0].buttons[0].type must be one of REPLY, URL, CALL, COPY' },
      });
    });
  });

  describe('POST /send/pix-button', () => {
    it('should send a payment_info button with the PIX key', async () => {
      const { record, message } = await sent('/send/pix-button', { pixType: 'cpf', pixKey: '12345678909' });
      expect(record.sendFunction).toBe('SendPixButton');
      const [button] = interactiveOf(message).nativeFlowMessage.buttons;
      expect(button.name).toBe('payment_info');
      expect(params(button).payment_settings).toEqual([
        { type: 'pix_static_code', pix_static_code: { merchant_name: 'Pix', key: '12345678909', key_type: 'CPF' } },
      ]);
    });

    it('should refuse an invalid key type and a missing key', async () => {
      expect(await post('/send/pix-button', { number: contact, pixType: 'IBAN', pixKey: 'x' })).toEqual({
        status: 400,
        body: { error: 'Invalid keyType. Allowed: CPF, CNPJ, PHONE, EMAIL, EVP' },
      });
      expect((await post('/send/pix-button', { number: contact, pixType: 'EVP' })).status).toBe(400);
    });
  });

  describe('POST /send/request-payment', () => {
    it('should send review_and_pay with PIX, boleto and link', async () => {
      const { record, message } = await sent('/send/request-payment', {
        amount: 49.9,
        text: 'Your order',
        title: 'Invoice 7',
        footer: 'Thanks',
        itemName: 'Shirt',
        invoiceNumber: 'INV-7',
        pixKey: 'pay@shop.com',
        pixType: 'EMAIL',
        pixName: 'Shop',
        boletoCode: '23790.12345 60000.000003 00000.000000 1 00000000004990',
        paymentLink: 'https://www.mercadopago.com.br/checkout/7',
      });
      expect(record.sendFunction).toBe('SendRequestPayment');
      const interactive = interactiveOf(message);
      expect(interactive).toMatchObject({ header: { title: 'Invoice 7' }, body: { text: 'Your order' }, footer: { text: 'Thanks' } });
      const [button] = interactive.nativeFlowMessage.buttons;
      expect(button.name).toBe('review_and_pay');
      const payment = params(button);
      expect(payment).toMatchObject({ currency: 'BRL', total_amount: { value: 4990, offset: 100 }, reference_id: 'INV-7' });
      expect(payment.order.items).toEqual([expect.objectContaining({ name: 'Shirt', quantity: 1, amount: { value: 4990, offset: 100 } })]);
      expect(payment.payment_settings).toEqual([
        { type: 'pix_static_code', pix_static_code: { merchant_name: 'Shop', key: 'pay@shop.com', key_type: 'EMAIL' } },
        { type: 'boleto', boleto: { digitable_line: '23790.12345 60000.000003 00000.000000 1 00000000004990' } },
        { type: 'payment_link', payment_link: { uri: 'https://www.mercadopago.com.br/checkout/7' } },
      ]);
    });

    it('should take total and currency from a received OrderMessage of the same contact', async () => {
      await store({
        messageId: 'ORDER1',
        messageType: 'OrderMessage',
        content: { orderID: '998877', orderTitle: 'Cart', itemCount: 3, totalAmount1000: 75500, totalCurrencyCode: 'BRL' },
      });
      const { message } = await sent('/send/request-payment', { orderMessageId: 'ORDER1', pixKey: '3f1c8d2e-1111-2222-3333-444455556666' });
      const payment = params(interactiveOf(message).nativeFlowMessage.buttons[0]);
      expect(payment.total_amount).toEqual({ value: 7550, offset: 100 });
      expect(payment.order).toMatchObject({
        order_id: '998877',
        items: [expect.objectContaining({ name: 'Cart (3 itens)', amount: { value: 7550, offset: 100 } })],
      });
      expect(payment.payment_settings[0].pix_static_code.key_type).toBe('EVP');
    });

    it('should refuse no payment method, a bad key type, an unknown order', async () => {
      expect(await post('/send/request-payment', { number: contact, amount: 10 })).toEqual({ status: 400, body: { error: 'Missing pixKey or pixCode' } });
      expect((await post('/send/request-payment', { number: contact, amount: 10, pixKey: 'k', pixType: 'X' })).body.error).toBe(
        'Invalid keyType. Allowed: CPF, CNPJ, PHONE, EMAIL, EVP',
      );
      expect((await post('/send/request-payment', { number: contact, pixKey: 'k' })).body.error).toBe('missing amount');
      expect((await post('/send/request-payment', { number: contact, orderMessageId: 'NOPE', pixKey: 'k' })).status).toBe(400);
    });

    it('should refuse a paymentLink outside the approved checkout domains (PAYMENT_LINK_DOMAINS)', async () => {
      expect(await post('/send/request-payment', { number: contact, amount: 10, paymentLink: 'https://checkout.evil.example/pay/7' })).toEqual({
        status: 400,
        body: { error: 'paymentLink: checkout.evil.example is not an approved payment domain' },
      });
      expect(await post('/send/request-payment', { number: contact, amount: 10, paymentLink: 'https://mercadopago.com.br.evil.example/x' })).toEqual({
        status: 400,
        body: { error: 'paymentLink: mercadopago.com.br.evil.example is not an approved payment domain' },
      });
      expect(await post('/send/request-payment', { number: contact, amount: 10, paymentLink: 'http://www.mercadopago.com.br/x' })).toEqual({
        status: 400,
        body: { error: 'paymentLink must be an https URL' },
      });
    });
  });

  describe('POST /send/location-button', () => {
    it('should send a send_location native flow button', async () => {
      const { record, message } = await sent('/send/location-button', { text: 'Where should we deliver?' });
      expect(record.sendFunction).toBe('SendLocationButton');
      const interactive = interactiveOf(message);
      expect(interactive.body.text).toBe('Where should we deliver?');
      expect(interactive.nativeFlowMessage.buttons.map((button: { name: string }) => button.name)).toEqual(['send_location']);
    });

    it('should answer missing required fields', async () => {
      expect(await post('/send/location-button', { number: contact })).toEqual({
        status: 400,
        body: { error: 'missing required fields or invalid coordinates' },
      });
      expect(await post('/send/location-button', { text: 'x' })).toEqual({ status: 400, body: { error: 'missing required fields or invalid coordinates' } });
    });
  });

  describe('interactive replies (POST /send/text with replyid and ">")', () => {
    const ownJid = () => `${ownPhone}@s.whatsapp.net`;

    it('should vote on a poll the instance sent: the phone decrypts option 2', async () => {
      const poll = await sent('/send/menu', { type: 'poll', text: 'Color?', choices: ['Red', 'Green', 'Blue'] });
      const { record, message } = await sent('/send/text', { text: '>2', replyid: poll.record.messageid });
      expect(record.messageType).toBe('PollUpdateMessage');
      const update = message.pollUpdateMessage;
      expect(update.pollCreationMessageKey).toMatchObject({ id: poll.record.messageid, fromMe: true });
      const vote = decryptPollVote(
        { encPayload: Buffer.from(update.vote.encPayload, 'base64'), encIv: Buffer.from(update.vote.encIv, 'base64') },
        {
          pollEncKey: Buffer.from(poll.message.messageContextInfo.messageSecret, 'base64'),
          pollCreatorJid: ownJid(),
          pollMsgId: poll.record.messageid,
          voterJid: ownJid(),
        },
      );
      expect(vote.selectedOptions!.map((hash) => Buffer.from(hash).toString('hex'))).toEqual([createHash('sha256').update('Green').digest('hex')]);
    });

    it('should vote on a poll received from the contact (stored raw WAMessage)', async () => {
      const secret = randomBytes(32);
      const raw = JSON.stringify(
        {
          key: { remoteJid: `${contact}@s.whatsapp.net`, fromMe: false, id: 'INPOLL1' },
          message: {
            messageContextInfo: { messageSecret: secret },
            pollCreationMessageV3: { name: 'Q', options: [{ optionName: 'Yes' }, { optionName: 'No' }], selectableOptionsCount: 1 },
          },
        },
        BufferJSON.replacer,
      );
      await store({ messageId: 'INPOLL1', messageType: 'PollCreationMessageV3', type: 'poll', raw, content: { name: 'Q' } });
      const { message } = await sent('/send/text', { text: '>1', replyid: 'INPOLL1' });
      const update = message.pollUpdateMessage;
      expect(update.pollCreationMessageKey).toMatchObject({ id: 'INPOLL1', remoteJid: `${contact}@s.whatsapp.net` });
      expect(update.pollCreationMessageKey.fromMe ?? false).toBe(false);
      const vote = decryptPollVote(
        { encPayload: Buffer.from(update.vote.encPayload, 'base64'), encIv: Buffer.from(update.vote.encIv, 'base64') },
        { pollEncKey: secret, pollCreatorJid: `${contact}@s.whatsapp.net`, pollMsgId: 'INPOLL1', voterJid: ownJid() },
      );
      expect(Buffer.from(vote.selectedOptions![0]).toString('hex')).toBe(createHash('sha256').update('Yes').digest('hex'));
    });

    it('should answer a list by rowId, item text and position', async () => {
      const list = await sent('/send/menu', { type: 'list', text: 'Menu', choices: ['[Drinks]', 'Coffee|c1|Hot', 'Tea|t1'] });
      const byId = await sent('/send/text', { text: '>t1', replyid: list.record.messageid });
      expect(byId.record.messageType).toBe('ListResponseMessage');
      expect(byId.message.listResponseMessage).toMatchObject({
        title: 'Tea',
        singleSelectReply: { selectedRowId: 't1' },
        contextInfo: { stanzaId: list.record.messageid },
      });
      const byText = await sent('/send/text', { text: '>Coffee', replyid: list.record.id });
      expect(byText.message.listResponseMessage.singleSelectReply.selectedRowId).toBe('c1');
      const byPosition = await sent('/send/text', { text: '> 2', replyid: list.record.messageid });
      expect(byPosition.message.listResponseMessage.singleSelectReply.selectedRowId).toBe('t1');
    });

    it('should answer native flow and carousel quick replies', async () => {
      const menu = await sent('/send/menu', { type: 'button', text: 'Ok?', choices: ['Yes|y1', 'No|n1', 'Site|https://example.com'] });
      const reply = await sent('/send/text', { text: '>No', replyid: menu.record.messageid });
      expect(reply.message.interactiveResponseMessage).toMatchObject({
        body: { text: 'No' },
        nativeFlowResponseMessage: { name: 'quick_reply', paramsJson: '{"id":"n1"}' },
      });
      const carousel = await sent('/send/carousel', {
        text: 'C',
        carousel: [
          { text: 'A', buttons: [{ id: 'a1', text: 'Take A' }] },
          { text: 'B', buttons: [{ id: 'b1', text: 'Take B', type: 'REPLY' }] },
        ],
      });
      const pick = await sent('/send/text', { text: '>b1', replyid: carousel.record.messageid });
      expect(JSON.parse(pick.message.interactiveResponseMessage.nativeFlowResponseMessage.paramsJson)).toEqual({ id: 'b1' });
    });

    it('should answer legacy buttons received from the contact', async () => {
      await store({
        messageId: 'INBTN1',
        messageType: 'ButtonsMessage',
        content: {
          contentText: 'Rate us',
          buttons: [
            { buttonID: 'good', buttonText: { displayText: 'Good' }, type: 1 },
            { buttonID: 'bad', buttonText: { displayText: 'Bad' }, type: 1 },
          ],
        },
      });
      const { message } = await sent('/send/text', { text: '>2', replyid: 'INBTN1' });
      expect(message.buttonsResponseMessage).toMatchObject({
        selectedButtonId: 'bad',
        selectedDisplayText: 'Bad',
        contextInfo: { stanzaId: 'INBTN1', participant: `${contact}@s.whatsapp.net` },
      });
    });

    it('should refuse URL buttons, missing options and unavailable originals', async () => {
      const menu = await sent('/send/menu', { type: 'button', text: 'Ok?', choices: ['Yes|y1', 'Site|https://example.com'] });
      const url = await post('/send/text', { number: contact, text: '>2', replyid: menu.record.messageid });
      expect(url.status).toBe(400);
      expect(url.body.error).toMatch(/cannot be replied/);
      const missing = await post('/send/text', { number: contact, text: '>7', replyid: menu.record.messageid });
      expect(missing.status).toBe(400);
      expect(missing.body.error).toMatch(/does not exist/);
      const poll = await sent('/send/menu', { type: 'poll', text: 'P', choices: ['a', 'b'] });
      expect((await post('/send/text', { number: contact, text: '>3', replyid: poll.record.messageid })).body.error).toMatch(/does not exist/);
      const unknown = await post('/send/text', { number: contact, text: '>1', replyid: 'NOT-THERE' });
      expect(unknown.status).toBe(400);
      expect(unknown.body.error).toMatch(/not available/);
    });

    it('should send a plain quoted text without ">" or when the original is not interactive', async () => {
      const list = await sent('/send/menu', { type: 'list', text: 'Menu', choices: ['Coffee|c1'] });
      const plain = await sent('/send/text', { text: 'just a comment', replyid: list.record.messageid });
      expect(plain.message.extendedTextMessage).toMatchObject({ text: 'just a comment', contextInfo: { stanzaId: list.record.messageid } });
      const original = await sent('/send/text', { text: 'hello' });
      const quote = await sent('/send/text', { text: '> quoted', replyid: original.record.messageid });
      expect(quote.message.extendedTextMessage.text).toBe('> quoted');
    });
  });
});
