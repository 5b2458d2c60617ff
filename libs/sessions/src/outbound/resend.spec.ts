import { ErrorCode, RpcError } from '@gw/contracts';
import { isConnectionLoss } from './resend';

/** A Boom as Baileys throws it (`new Boom(message, { statusCode, data })`; the status is 500 unless given). */
const boom = (message: string, options: { statusCode?: number; data?: unknown } = {}) =>
  Object.assign(new Error(message), { isBoom: true, output: { statusCode: options.statusCode ?? 500 }, data: options.data });

describe('isConnectionLoss', () => {
  it('should take a closed, lost, timed-out or replaced connection as a loss the same message may go again after', () => {
    expect(isConnectionLoss(boom('Connection Closed', { statusCode: 428 }))).toBe(true);
    expect(isConnectionLoss(boom('Timed Out', { statusCode: 408 }))).toBe(true);
    expect(isConnectionLoss(boom('Connection Terminated by Server', { statusCode: 428 }))).toBe(true);
    expect(isConnectionLoss(boom('Stream Errored (restart required)', { statusCode: 515 }))).toBe(true);
    expect(isConnectionLoss(new RpcError(ErrorCode.NotConnected, 'instance is not connected'))).toBe(true);
  });

  it('should not take an error WhatsApp answered (an IQ error, Boom status 500 with its code in data) as a lost connection', () => {
    // Baileys' query(): new Boom(text, { data: code }) — a group that does not exist, a refused query.
    expect(isConnectionLoss(boom('item-not-found', { data: 404 }))).toBe(false);
    expect(isConnectionLoss(boom('forbidden', { data: 403 }))).toBe(false);
    expect(isConnectionLoss(boom('internal-server-error', { data: 500 }))).toBe(false);
    expect(isConnectionLoss(new Error('media upload failed'))).toBe(false);
    expect(isConnectionLoss(new RpcError(ErrorCode.NotFound, 'Message not found'))).toBe(false);
  });
});
