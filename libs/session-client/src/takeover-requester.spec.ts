import { ConnectionLostError, InProcessBus } from '@gw/bus';
import { ErrorCode, RpcError } from '@gw/contracts';
import { TakeoverRequester } from './takeover-requester';

/** A bus whose first request to the instance was in flight when its NATS server was lost. */
function busLosingItsServerOnce(): { bus: InProcessBus; sent: () => number } {
  const bus = new InProcessBus();
  let sent = 0;
  const request = bus.request.bind(bus);
  bus.request = (<T>(subject: string, data: unknown, options: { timeoutMs: number }) => {
    if (subject.endsWith('.send') && ++sent === 1) return Promise.reject(new ConnectionLostError(subject));
    return request<T>(subject, data, options);
  }) as InProcessBus['request'];
  bus.subscribe('instance.i1.send', async () => ({ messageId: 'm1', status: 'Sent' }));
  return { bus, sent: () => sent };
}

describe(TakeoverRequester.name, () => {
  describe('requestAcrossTakeover', () => {
    it('should send again a request whose NATS server was lost while it was in flight', async () => {
      const { bus, sent } = busLosingItsServerOnce();
      const sut = new TakeoverRequester(bus, { failoverWaitMs: 5_000 });
      await expect(sut.requestAcrossTakeover('i1', 'send', {} as never, 500)).resolves.toEqual({ messageId: 'm1', status: 'Sent' });
      expect(sent()).toBe(2);
    });
  });

  describe('request', () => {
    it('should answer a timeout for a request that cannot be repeated', async () => {
      const { bus } = busLosingItsServerOnce();
      const sut = new TakeoverRequester(bus, { failoverWaitMs: 5_000 });
      const error = await sut.request('i1', 'send', {} as never, 500).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RpcError);
      expect(error).toMatchObject({ code: ErrorCode.Timeout });
    });
  });
});
