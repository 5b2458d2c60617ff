import { Webhook } from 'standardwebhooks';
import { generateWebhookSecret, signWebhook } from './signature';

describe('signWebhook', () => {
  it('should produce headers a Standard Webhooks receiver verifies', () => {
    const secret = generateWebhookSecret();
    const body = JSON.stringify({ EventType: 'connection', n: 'ação' });
    const timestamp = Math.floor(Date.now() / 1000);
    const headers = signWebhook(secret, 'evt_1', timestamp, body);
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
  });
});
