import { parseButtons, parseCarousel, parseList } from '../menu-choices';
import {
  buildButtonMenu,
  buildCarousel,
  buildListMenu,
  buildLocationRequest,
  buildPaymentRequest,
  buildPixButton,
  buildPoll,
  InteractiveError,
  nativeFlowButton,
} from './builders';

const secret = Buffer.alloc(32, 7).toString('base64');
const flow = (message: Record<string, any>) => message.viewOnceMessage.message.interactiveMessage;
const params = (button: { buttonParamsJson: string }) => JSON.parse(button.buttonParamsJson);

describe('interactive builders', () => {
  it('should turn every menu button kind into its native flow button', () => {
    const buttons = parseButtons(['Yes|y1', 'Code|copy:ABC', 'Call|call:+5511999998888', 'Site|https://example.com']).map(nativeFlowButton);
    expect(buttons.map((button) => button.name)).toEqual(['quick_reply', 'cta_copy', 'cta_call', 'cta_url']);
    expect(params(buttons[0])).toEqual({ display_text: 'Yes', id: 'y1' });
    expect(params(buttons[1])).toMatchObject({ display_text: 'Code', copy_code: 'ABC' });
    expect(params(buttons[2])).toEqual({ display_text: 'Call', phone_number: '+5511999998888' });
    expect(params(buttons[3])).toMatchObject({ display_text: 'Site', url: 'https://example.com' });
  });

  it('should wrap a button menu in viewOnceMessage with the native flow biz node', () => {
    const built = buildButtonMenu('Pick one', parseButtons(['A|a', 'B|b']), 'footer');
    expect(built.messageType).toBe('InteractiveMessage');
    expect(flow(built.message)).toMatchObject({ body: { text: 'Pick one' }, footer: { text: 'footer' }, nativeFlowMessage: { messageVersion: 1 } });
    expect(built.nodes[0]).toEqual({
      tag: 'biz',
      attrs: {},
      content: [{ tag: 'interactive', attrs: { type: 'native_flow', v: '1' }, content: [{ tag: 'native_flow', attrs: { v: '9', name: 'mixed' } }] }],
    });
  });

  it('should build a single-select list with sections and rows', () => {
    const built = buildListMenu('Our menu', parseList(['[Drinks]', 'Coffee|c1|Hot', 'Tea', '[Food]', 'Cake|k1']), 'Open', 'ft');
    expect(built.message.listMessage).toEqual({
      description: 'Our menu',
      buttonText: 'Open',
      listType: 1,
      footerText: 'ft',
      sections: [
        {
          title: 'Drinks',
          rows: [
            { title: 'Coffee', description: 'Hot', rowId: 'c1' },
            { title: 'Tea', description: '', rowId: 'Tea' },
          ],
        },
        { title: 'Food', rows: [{ title: 'Cake', description: '', rowId: 'k1' }] },
      ],
    });
    expect(built.nodes).toEqual([{ tag: 'biz', attrs: {}, content: [{ tag: 'list', attrs: { type: 'product_list', v: '2' } }] }]);
  });

  it('should build a single-select poll as V3 and a multi-select as pollCreationMessage, with the secret', () => {
    const single = buildPoll('Best?', ['A', 'B'], 1, secret);
    expect(single.messageType).toBe('PollCreationMessageV3');
    expect(single.message).toEqual({
      messageContextInfo: { messageSecret: secret },
      pollCreationMessageV3: { encKey: secret, name: 'Best?', options: [{ optionName: 'A' }, { optionName: 'B' }], selectableOptionsCount: 1 },
    });
    expect(single.nodes).toEqual([{ tag: 'meta', attrs: { polltype: 'creation' } }]);
    expect(buildPoll('Best?', ['A', 'B', 'C'], 0, secret).message.pollCreationMessage).toMatchObject({ selectableOptionsCount: 0 });
    expect(() => buildPoll('x', ['A', 'B'], 3, secret)).toThrow(InteractiveError);
  });

  it('should build carousel cards with their own buttons', () => {
    const built = buildCarousel('Products', parseCarousel(['[Card 1\nsub 1]', '{https://x/1.png}', 'Buy|buy1', '[Card 2]', 'Site|https://example.com']));
    const cards = flow(built.message).carouselMessage.cards;
    expect(cards).toHaveLength(2);
    expect(cards[0]).toMatchObject({ body: { text: 'Card 1' }, footer: { text: 'sub 1' }, nativeFlowMessage: { buttons: [{ name: 'quick_reply' }] } });
    expect(cards[1].nativeFlowMessage.buttons[0].name).toBe('cta_url');
  });

  it('should build a PIX payment_info button', () => {
    const built = buildPixButton({ pixType: 'EMAIL', pixKey: 'pay@shop.com', pixName: 'Shop' });
    const [button] = flow(built.message).nativeFlowMessage.buttons;
    expect(button.name).toBe('payment_info');
    expect(params(button).payment_settings).toEqual([
      { type: 'pix_static_code', pix_static_code: { merchant_name: 'Shop', key: 'pay@shop.com', key_type: 'EMAIL' } },
    ]);
    expect(built.nodes).toEqual([{ tag: 'biz', attrs: { native_flow_name: 'payment_info' } }]);
  });

  it('should build review_and_pay with every payment method given, and refuse none', () => {
    const built = buildPaymentRequest({
      amount: 12.5,
      currency: 'BRL',
      items: [{ name: 'Shirt', amount: 12.5, quantity: 1 }],
      text: 'Pay me',
      title: 'Invoice',
      footer: 'thanks',
      invoiceNumber: 'INV-1',
      pix: { key: 'k', type: 'EVP', name: 'Me' },
      boletoCode: '123',
      paymentLink: 'https://pay.example.com/x',
    });
    const message = flow(built.message);
    expect(message).toMatchObject({ header: { title: 'Invoice' }, body: { text: 'Pay me' }, footer: { text: 'thanks' } });
    const payment = params(message.nativeFlowMessage.buttons[0]);
    expect(message.nativeFlowMessage.buttons[0].name).toBe('review_and_pay');
    expect(payment).toMatchObject({ currency: 'BRL', total_amount: { value: 1250, offset: 100 }, reference_id: 'INV-1' });
    expect(payment.order.items).toEqual([{ retailer_id: 'item-1', name: 'Shirt', amount: { value: 1250, offset: 100 }, quantity: 1 }]);
    expect(payment.payment_settings.map((setting: { type: string }) => setting.type)).toEqual(['pix_static_code', 'boleto', 'payment_link']);
    expect(built.nodes).toEqual([{ tag: 'biz', attrs: { native_flow_name: 'order_details' } }]);
    expect(() => buildPaymentRequest({ amount: 1, currency: 'BRL', items: [], text: '' })).toThrow('Missing pixKey or pixCode');
  });

  it('should build a send_location request and refuse an empty text', () => {
    expect(flow(buildLocationRequest('Where are you?').message).nativeFlowMessage.buttons).toEqual([{ name: 'send_location', buttonParamsJson: '' }]);
    expect(buildLocationRequest('Where are you?').nodes).toEqual([
      {
        tag: 'biz',
        attrs: {},
        content: [{ tag: 'interactive', attrs: { type: 'native_flow', v: '1' }, content: [{ tag: 'native_flow', attrs: { v: '9', name: 'send_location' } }] }],
      },
    ]);
    expect(() => buildLocationRequest(' ')).toThrow('missing required fields or invalid coordinates');
  });
});
