import { deliveryUrl, webhookWants } from './webhook-filter';

describe('webhookWants', () => {
  const message = (fields: Record<string, unknown>) => ({ message: fields });

  it('should pass every event when no events are listed', () => {
    expect(webhookWants({ events: [], excludeMessages: [] }, 'presence', {})).toBe(true);
  });

  it('should pass only listed events', () => {
    expect(webhookWants({ events: ['messages'], excludeMessages: [] }, 'connection', {})).toBe(false);
    expect(webhookWants({ events: ['messages'], excludeMessages: [] }, 'messages', message({}))).toBe(true);
  });

  it.each([
    ['wasSentByApi', { wasSentByApi: true }, false],
    ['wasSentByApi', { wasSentByApi: false }, true],
    ['wasNotSentByApi', { wasSentByApi: false }, false],
    ['fromMeYes', { fromMe: true }, false],
    ['fromMeNo', { fromMe: false }, false],
    ['isGroupYes', { isGroup: true }, false],
    ['isGroupNo', { isGroup: false }, false],
    ['IsGroupNo', { isGroup: false }, false],
    ['isGroupNo', { isGroup: true }, true],
  ])('should apply %s to %p', (flag, fields, expected) => {
    expect(webhookWants({ events: [], excludeMessages: [flag] }, 'messages', message(fields))).toBe(expected);
  });

  it('should not apply exclusions to messages_update', () => {
    expect(webhookWants({ events: [], excludeMessages: ['wasSentByApi'] }, 'messages_update', message({ wasSentByApi: true }))).toBe(true);
  });
});

describe('deliveryUrl', () => {
  it('should append the event, then the message type', () => {
    const webhook = { url: 'https://h/webhook/', addUrlEvents: true, addUrlTypesMessages: true };
    expect(deliveryUrl(webhook, 'messages', { message: { messageType: 'Conversation' } })).toBe('https://h/webhook/messages/Conversation');
    expect(deliveryUrl(webhook, 'connection', {})).toBe('https://h/webhook/connection');
  });

  it('should append to the path and keep a query string and fragment', () => {
    const webhook = { url: 'http://h/hook?x=1&y=a%2Fb', addUrlEvents: true, addUrlTypesMessages: true };
    expect(deliveryUrl(webhook, 'messages', { message: { messageType: 'ImageMessage' } })).toBe('http://h/hook/messages/ImageMessage?x=1&y=a%2Fb');
    expect(deliveryUrl({ ...webhook, url: 'http://h/hook/?x=1#frag' }, 'presence', {})).toBe('http://h/hook/presence?x=1#frag');
    expect(deliveryUrl({ ...webhook, url: 'http://h:8080?x=1' }, 'chats', {})).toBe('http://h:8080/chats?x=1');
  });

  it('should use the configured URL as given when nothing is appended', () => {
    const url = 'http://h/hook/?x=1';
    expect(deliveryUrl({ url, addUrlEvents: false, addUrlTypesMessages: false }, 'messages', {})).toBe(url);
    expect(deliveryUrl({ url, addUrlEvents: false, addUrlTypesMessages: true }, 'connection', {})).toBe(url);
  });
});
