import { classifyClose, reconnectDelay, unreachableReason } from './disconnect-reason';

describe(classifyClose.name, () => {
  it.each([
    [515, { kind: 'restart' }],
    [401, { kind: 'logged-out', reason: '401: logged out from another device' }],
    [440, { kind: 'terminal', reason: '440: connection replaced' }],
    [403, { kind: 'terminal', reason: '403: forbidden' }],
    [405, { kind: 'outdated', reason: '405: client outdated' }],
    [408, { kind: 'transient', reason: '408: connection lost' }],
    [428, { kind: 'transient', reason: '428: connection closed' }],
    [500, { kind: 'transient', reason: '500: bad session' }],
    [503, { kind: 'transient', reason: '503: service unavailable' }],
    [599, { kind: 'transient', reason: '599: connection error' }],
    [undefined, { kind: 'transient', reason: 'connection closed' }],
  ])('should classify %s', (code, verdict) => {
    expect(classifyClose(code)).toEqual(verdict);
  });
});

describe(reconnectDelay.name, () => {
  it('should grow exponentially, stay under the cap and keep at least half of it', () => {
    expect(reconnectDelay(0, 1000, 30_000, () => 1)).toBe(1000);
    expect(reconnectDelay(3, 1000, 30_000, () => 1)).toBe(8000);
    expect(reconnectDelay(10, 1000, 30_000, () => 1)).toBe(30_000);
    expect(reconnectDelay(10, 1000, 30_000, () => 0)).toBe(15_000);
    expect(reconnectDelay(1000, 1000, 30_000, () => 0.5)).toBe(22_500);
  });
});

describe(unreachableReason.name, () => {
  const networkError = (code: string, message: string) => Object.assign(new Error(message), { code });

  it("should name the network error Baileys wrapped (a Boom's data)", () => {
    const boom = Object.assign(new Error('WebSocket Error (connect ECONNREFUSED 1.2.3.4:443)'), {
      data: networkError('ECONNREFUSED', 'connect ECONNREFUSED 1.2.3.4:443'),
    });
    expect(unreachableReason(boom)).toBe('cannot reach WhatsApp: connect ECONNREFUSED 1.2.3.4:443');
    expect(unreachableReason(Object.assign(new Error('x'), { cause: networkError('ENOTFOUND', 'getaddrinfo ENOTFOUND web.whatsapp.com') }))).toBe(
      'cannot reach WhatsApp: getaddrinfo ENOTFOUND web.whatsapp.com',
    );
  });

  it('should say nothing of a close WhatsApp itself made, nor of a reset of a connection that got through', () => {
    expect(unreachableReason(Object.assign(new Error('x'), { data: networkError('ECONNRESET', 'read ECONNRESET') }))).toBeUndefined();
    expect(unreachableReason(Object.assign(new Error('Connection Terminated'), { output: { statusCode: 428 } }))).toBeUndefined();
    expect(unreachableReason(undefined)).toBeUndefined();
  });
});
