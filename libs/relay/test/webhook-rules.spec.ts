import { Webhook } from 'standardwebhooks';
import { deliveryUrl, webhookWants } from '../src/webhook-filter';
import { nextAttemptDelay, parseRetryAfter, parseSchedule, DEFAULT_RETRY_SCHEDULE_MS } from '../src/retry-schedule';
import { generateWebhookSecret, signWebhook } from '../src/signature';

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

describe('retry schedule', () => {
  it('should follow the schedule with jitter and stop after it', () => {
    expect(nextAttemptDelay(DEFAULT_RETRY_SCHEDULE_MS, 1, null, () => 0.5)).toBe(5_000);
    expect(nextAttemptDelay(DEFAULT_RETRY_SCHEDULE_MS, 2, null, () => 0)).toBe(240_000);
    expect(nextAttemptDelay(DEFAULT_RETRY_SCHEDULE_MS, 8, null)).toBeNull();
  });

  it('should honour a longer Retry-After', () => {
    expect(nextAttemptDelay([1000], 1, 60_000, () => 0.5)).toBe(60_000);
  });

  it('should read Retry-After as seconds or a date', () => {
    expect(parseRetryAfter('120')).toBe(120_000);
    expect(parseRetryAfter(new Date(10_000).toUTCString(), 0)).toBe(10_000);
    expect(parseRetryAfter('soon')).toBeNull();
  });

  it('should parse a configured schedule', () => {
    expect(parseSchedule('5s, 5m,2h,1d,250ms')).toEqual([5_000, 300_000, 7_200_000, 86_400_000, 250]);
    expect(() => parseSchedule('5 parsecs')).toThrow();
  });
});

describe('signWebhook', () => {
  it('should produce headers a Standard Webhooks receiver verifies', () => {
    const secret = generateWebhookSecret();
    const body = JSON.stringify({ EventType: 'connection', n: 'ação' });
    const timestamp = Math.floor(Date.now() / 1000);
    const headers = signWebhook(secret, 'evt_1', timestamp, body);
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
  });
});
