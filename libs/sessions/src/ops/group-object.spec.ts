import { ErrorCode, RpcError } from '@gw/contracts';
import { groupRefusal } from './group-object';
import { newsletterRefusal } from './newsletter-wire';

/** WhatsApp's refusals of group and newsletter IQs as bus errors: never an internal error (a 500) when WhatsApp said what went wrong. */
describe('group and newsletter refusals', () => {
  // Baileys throws an IQ's <error code text> as a Boom whose data is the code; a closed socket as a Boom with statusCode 428.
  // (Boom's shape: isBoom, data, output.statusCode — 500 unless given.)
  const boom = (message: string, data: unknown, statusCode = 500) => Object.assign(new Error(message), { isBoom: true, data, output: { statusCode } });
  const iqError = (code: number, text: string) => boom(text, code);

  it.each([
    [404, 'item-not-found', ErrorCode.NotFound],
    [403, 'not-admin', ErrorCode.Forbidden],
    [400, 'bad-request', ErrorCode.BadRequest],
    [408, 'timeout', ErrorCode.Timeout],
    [409, 'conflict', ErrorCode.Conflict],
    [429, 'rate-overlimit', ErrorCode.Refused],
    [419, 'resource-limit', ErrorCode.Refused],
    [500, 'internal-server-error', ErrorCode.Refused],
  ])('maps a group IQ answered %i %s to %s', (code, text, expected) => {
    const mapped = groupRefusal(iqError(code, text), 'error doing it');
    expect(mapped).toBeInstanceOf(RpcError);
    expect((mapped as RpcError).code).toBe(expected);
    expect((mapped as RpcError).message).toMatch(/^error doing it: /);
  });

  it("names the code and WhatsApp's text of a refusal it has no rule for", () => {
    expect((groupRefusal(iqError(429, 'rate-overlimit'), 'error creating group') as RpcError).message).toBe(
      'error creating group: WhatsApp answered 429 (rate-overlimit)',
    );
    expect((newsletterRefusal(iqError(419, 'resource-limit'), 'error following newsletter') as RpcError).message).toBe(
      'error following newsletter: WhatsApp answered 419 (resource-limit)',
    );
  });

  it('takes a socket closed mid-call for the instance not being connected', () => {
    const closed = boom('Connection Closed', undefined, 428);
    expect((groupRefusal(closed, 'error leaving group') as RpcError).code).toBe(ErrorCode.NotConnected);
    expect((newsletterRefusal(closed, 'error muting newsletter') as RpcError).code).toBe(ErrorCode.NotConnected);
  });

  it('leaves errors without a code (bugs) and bus errors as they are', () => {
    const bug = new TypeError('x is undefined');
    expect(groupRefusal(bug, 'error')).toBe(bug);
    expect(newsletterRefusal(bug, 'error')).toBe(bug);
    const already = new RpcError(ErrorCode.BadRequest, 'no');
    expect(groupRefusal(already, 'error')).toBe(already);
  });
});
