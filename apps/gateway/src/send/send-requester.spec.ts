import { ErrorCode, RpcError, type SendRequest } from '@gw/contracts';

import { ApiError } from '../common/api-error';
import { SendRequester } from './send-requester';
import type { RequestInstance } from '../common/request-instance';

/**
 * A sync send the worker did not answer in time: answered from the ledger once the worker can no longer
 * begin it (SendRequest.notAfter), never a 504 for a message that goes out anyway.
 */
describe(SendRequester.name, () => {
  const instance = { id: 'i1', owner: '5511000000000', status: 'connected' } as RequestInstance;
  const built = { content: { kind: 'text', text: 'oi', linkPreview: null }, sendFunction: 'SendTextMessage', payload: {} } as never;

  function harness(reply: (request: SendRequest) => Promise<unknown>, stored: Record<string, unknown> | null) {
    const seen: { request?: SendRequest; timeoutMs?: number; readAt?: number } = {};
    const sessions = {
      requestAcrossTakeover: async (_id: string, _op: string, request: SendRequest, timeoutMs: number) => {
        seen.request = request;
        seen.timeoutMs = timeoutMs;
        return reply(request);
      },
    };
    const messages = {
      findOne: async () => {
        seen.readAt = Date.now();
        return stored;
      },
    };
    const sut = new SendRequester(sessions as never, {} as never, {} as never, messages as never);
    return { sut, seen };
  }

  /** Runs a send with fake timers, past the deadline and the gateway's margin after it. */
  async function pastDeadline<T>(run: () => Promise<T>): Promise<T | unknown> {
    jest.useFakeTimers();
    try {
      const result = run().catch((error: unknown) => error);
      await jest.advanceTimersByTimeAsync(23_000);
      return await result;
    } finally {
      jest.useRealTimers();
    }
  }

  const row = (status: string) => ({
    id: 'r1',
    messageId: 'M1',
    chatJid: '5521999990000@s.whatsapp.net',
    fromMe: true,
    status,
    error: status === 'Failed' ? 'failed to send: boom' : '',
    messageType: 'conversation',
    messageTimestamp: new Date(),
    content: {},
    text: 'oi',
  });

  it('should give the worker a deadline to begin the send, before the gateway stops waiting', async () => {
    const started = Date.now();
    const { sut, seen } = harness(async () => ({ id: 'r1', messageid: 'M1', status: 'Sent' }), null);
    await sut.send(instance, {} as never, '5521999990000@s.whatsapp.net', built);
    expect(seen.request?.notAfter).toBeGreaterThanOrEqual(started + 20_000);
    expect(seen.request?.notAfter).toBeLessThan(started + 21_000);
    expect(seen.timeoutMs).toBe(30_000);
  });

  describe('an async send whose queueing met no database (a failover)', () => {
    const lost = Object.assign(new Error('Connection terminated unexpectedly'), {});
    function asyncHarness(ledger: Array<Record<string, unknown> | null | Error>) {
      const asyncQueue = {
        enqueue: async () => {
          throw lost;
        },
      };
      const reads: number[] = [];
      const messages = {
        findOne: async () => {
          reads.push(Date.now());
          const next = ledger.shift();
          if (next instanceof Error) throw next;
          return next ?? null;
        },
      };
      return { sut: new SendRequester({} as never, asyncQueue as never, {} as never, messages as never), reads };
    }
    const sendAsync = (sut: SendRequester) => sut.send(instance, { async: true } as never, '5521999990000@s.whatsapp.net', built);

    it('should answer it as queued when the commit went through after all', async () => {
      const { sut, reads } = asyncHarness([new Error('connect ECONNREFUSED 127.0.0.1:5432'), row('Queued')]);
      const reply = (await pastDeadline(() => sendAsync(sut))) as { status: string; response: { message: string } };
      expect(reply).toMatchObject({ status: 'Queued', response: { message: 'Message queued successfully' } });
      expect(reads).toHaveLength(2);
    });

    it('should let the database error stand (503, try again) when nothing was queued', async () => {
      const { sut } = asyncHarness([null]);
      expect(await pastDeadline(() => sendAsync(sut))).toBe(lost);
    });

    it('should answer that the outcome is unknown, naming the messageid, while the database stays away', async () => {
      const { sut, reads } = asyncHarness([0, 1, 2, 3, 4].map(() => new Error('Connection terminated unexpectedly')));
      const error = await pastDeadline(() => sendAsync(sut));
      expect(error).toBeInstanceOf(ApiError);
      expect((error as ApiError).message).toMatch(/whether it was queued is not known/);
      expect((error as ApiError).extra.messageid).toEqual(expect.any(String));
      expect(reads).toHaveLength(5);
    });

    it('should not look anything up for an error of another kind', async () => {
      const refused = Object.assign(new Error('insert or update violates foreign key'), { code: '23503' });
      const asyncQueue = { enqueue: async () => Promise.reject(refused) };
      const sut = new SendRequester({} as never, asyncQueue as never, {} as never, { findOne: async () => row('Queued') } as never);
      await expect(sendAsync(sut)).rejects.toBe(refused);
    });
  });

  it('should answer 504 "not sent" when the ledger has no row once the deadline passed', async () => {
    const { sut, seen } = harness(async () => {
      // The worker's answer never came.
      throw new RpcError(ErrorCode.Timeout, 'request instance.i1.send timed out');
    }, null);
    const error = await pastDeadline(() => sut.send(instance, {} as never, '5521999990000@s.whatsapp.net', built));
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(504);
    expect((error as ApiError).message).toMatch(/not sent and will not be/);
    // Read only once the worker can no longer begin it.
    expect(seen.readAt).toBeGreaterThan(seen.request?.notAfter ?? Infinity);
  });

  it('should answer the stored row (Pending) when the worker began the send before its deadline', async () => {
    const { sut } = harness(async () => {
      throw new RpcError(ErrorCode.Timeout, 'request instance.i1.send timed out');
    }, row('Pending'));
    const answer = await pastDeadline(() => sut.send(instance, {} as never, '5521999990000@s.whatsapp.net', built));
    expect(answer).toMatchObject({ messageid: 'M1', status: 'Pending', response: { status: 'success' } });
  });

  it('should answer a stored Failed row as the refusal it is', async () => {
    const { sut } = harness(async () => {
      throw new RpcError(ErrorCode.Timeout, 'timed out');
    }, row('Failed'));
    const error = await pastDeadline(() => sut.send(instance, {} as never, '5521999990000@s.whatsapp.net', built));
    expect((error as ApiError).status).toBe(502);
  });

  it('should not say "not sent" when the ledger cannot be read: the outcome is unknown, and the answer names the id to look up', async () => {
    const { sut } = harness(async () => {
      throw new RpcError(ErrorCode.Timeout, 'timed out');
    }, null);
    (sut as unknown as { messages: { findOne: () => Promise<never> } }).messages.findOne = async () => {
      throw new Error('Connection terminated unexpectedly');
    };
    jest.useFakeTimers();
    try {
      const result = sut.send(instance, {} as never, '5521999990000@s.whatsapp.net', built).catch((e: unknown) => e);
      await jest.advanceTimersByTimeAsync(40_000);
      const error = (await result) as ApiError;
      expect(error.status).toBe(504);
      expect(error.message).toMatch(/not known/);
      expect(error.body()).toMatchObject({ messageid: expect.any(String) });
    } finally {
      jest.useRealTimers();
    }
  });

  it('should pass any other error through untouched', async () => {
    const { sut, seen } = harness(async () => {
      throw new RpcError(ErrorCode.NotConnected, 'instance is not connected');
    }, row('Pending'));
    await expect(sut.send(instance, {} as never, '5521999990000@s.whatsapp.net', built)).rejects.toMatchObject({ code: ErrorCode.NotConnected });
    expect(seen.readAt).toBeUndefined();
  });
});
