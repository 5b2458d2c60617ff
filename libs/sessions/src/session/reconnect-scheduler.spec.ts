import type { InstanceEntity, Lease } from '@gw/persistence';
import { createLogger } from '@gw/platform';
import { HandshakeGate } from './handshake-gate';
import { ReconnectPacer } from './reconnect-pacer';
import { ReconnectScheduler } from './reconnect-scheduler';
import { SessionState } from './session-state';
import type { SessionServices } from './session-types';
import { SocketSlot } from './socket-slot';

describe(ReconnectScheduler.name, () => {
  const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

  function setup(gateLimit = 1) {
    const handshakes = new HandshakeGate(gateLimit, 60_000);
    const pacer = new ReconnectPacer({ resumeJitterMs: 10, scoutIntervalMs: 60_000, scoutMinWaiting: 100 });
    const services = {
      logger: createLogger('test', 'silent'),
      config: { reconnectBaseMs: 1_000, reconnectMaxMs: 30_000 },
      pacer,
      handshakes,
    } as unknown as SessionServices;
    const state = new SessionState({ id: 'i1' } as InstanceEntity, { instanceId: 'i1' } as Lease, services, jest.fn());
    state.phase = 'connecting';
    const reconnectNow = jest.fn<Promise<void>, [() => void, boolean]>().mockResolvedValue(undefined);
    const sut = new ReconnectScheduler(state, new SocketSlot(state.logger), reconnectNow);
    return { sut, state, handshakes, reconnectNow };
  }

  describe('throughGate', () => {
    it('should open once the gate lets it, saying whether the row was read for that very request', async () => {
      const { sut, reconnectNow, handshakes } = setup();
      sut.throughGate(0);
      sut.markRowRead();
      await settle();
      expect(reconnectNow).toHaveBeenCalledTimes(1);
      expect(reconnectNow.mock.calls[0][1]).toBe(true);
      reconnectNow.mock.calls[0][0]();
      sut.throughGate(0);
      await settle();
      expect(reconnectNow).toHaveBeenCalledTimes(2);
      expect(reconnectNow.mock.calls[1][1]).toBe(false);
      reconnectNow.mock.calls[1][0]();
      expect(handshakes.stats.active).toBe(0);
    });

    it('should let a newer request replace one waiting for the gate; the older gives its ticket back', async () => {
      const { sut, reconnectNow, handshakes } = setup();
      const busy = await handshakes.acquire();
      sut.throughGate(0);
      await settle();
      sut.throughGate(0);
      await settle();
      expect(handshakes.stats.waiting).toBe(2);
      busy();
      await settle();
      expect(reconnectNow).toHaveBeenCalledTimes(1);
      expect(handshakes.stats).toMatchObject({ active: 1, waiting: 0 });
    });

    it('should step aside when a socket opened meanwhile, or the session ended', async () => {
      const { sut, state, reconnectNow, handshakes } = setup();
      sut.throughGate(0);
      sut.supersede();
      await settle();
      state.phase = 'ended';
      sut.throughGate(0);
      await settle();
      expect(reconnectNow).not.toHaveBeenCalled();
      expect(handshakes.stats.active).toBe(0);
    });
  });

  describe('schedule', () => {
    it('should back off by the attempt, until cancelled or the attempts are reset', async () => {
      const { sut, reconnectNow } = setup();
      sut.schedule();
      expect(sut.backingOff).toBe(true);
      expect(sut.failedAttempts).toBe(1);
      sut.cancel();
      expect(sut.backingOff).toBe(false);
      await settle();
      expect(reconnectNow).not.toHaveBeenCalled();
      sut.resetAttempts();
      expect(sut.failedAttempts).toBe(0);
    });
  });
});
