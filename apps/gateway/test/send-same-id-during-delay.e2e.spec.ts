import { Subjects, type SendRequest } from '@gw/contracts';
import { randomBytes } from 'node:crypto';
import { nextPhone, Stack } from './support/stack';

/**
 * A send with a typing delay is stored (reserved) before the delay and relayed after it. A second request
 * with the same message id arriving during that delay (a client's retry, a failover resend, a chatbot or
 * Chatwoot runner resuming a dead one's work) must not relay it again: only the request that marks the id
 * relayed sends it; the other answers with the stored row. The phone gets the message once.
 */
describe('the same send twice during its typing delay', () => {
  const stack = new Stack();

  beforeAll(() => stack.start());
  afterAll(() => stack.stop());

  it('should relay the message once and answer both requests with it', async () => {
    const instance = await stack.connectedInstance('twice');
    const friend = nextPhone();
    await stack.control('POST', '/sim/accounts', { phone: friend });
    const messageId = `3EB0${randomBytes(9).toString('hex').toUpperCase()}`;
    const request: SendRequest = {
      instanceId: instance.id,
      recordId: `r${randomBytes(4).toString('hex').slice(0, 7)}`,
      messageId,
      chatJid: `${friend}@s.whatsapp.net`,
      content: { kind: 'text', text: 'only once, please', linkPreview: null },
      delayMs: 1_500,
      record: { sendFunction: 'test', sendPayload: {}, trackSource: '', trackId: '', sendFolderId: '' },
    };
    const send = () => stack.bus.request<{ messageid?: string; status?: string }>(Subjects.instance(instance.id, 'send'), request, { timeoutMs: 20_000 });

    const first = send();
    // The second arrives while the first is in its typing delay (reserved, not relayed yet).
    await new Promise((resolve) => setTimeout(resolve, 400));
    const [a, b] = await Promise.all([first, send()]);
    expect([a, b].map((answer) => JSON.stringify(answer).includes(messageId))).toEqual([true, true]);

    await stack.received(friend, messageId);
    // Long enough for a second copy to arrive if one were relayed (the second request's delay ends ~400 ms later).
    const inbox = await stack.inbox(friend, 2_500);
    expect(inbox.filter((entry) => entry.id === messageId)).toHaveLength(1);
  });
});
