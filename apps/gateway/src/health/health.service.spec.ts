import { Bus, InProcessBus } from '@gw/bus';
import type { HealthRepository } from '@gw/persistence';
import { HealthService } from './health.service';

/** A bus to a server (as NATS is): `ping` reaches it or fails. */
function remoteBus(ping: () => Promise<void>): Bus {
  return Object.assign(Object.create(Bus.prototype) as Bus, { ping });
}

describe(HealthService.name, () => {
  const database = (ping: () => Promise<void>) => ({ ping }) as unknown as HealthRepository;
  const up = () => Promise.resolve();
  const down = () => Promise.reject(new Error('connection refused'));

  describe('readiness', () => {
    it('should name the in-process bus as such instead of claiming NATS was checked', async () => {
      const sut = new HealthService(database(up), new InProcessBus());
      expect(await sut.readiness()).toEqual({ status: 'ok', checks: { postgres: 'ok', bus: 'in-process' } });
    });

    it('should ping NATS when the bus is a server', async () => {
      const sut = new HealthService(database(up), remoteBus(up));
      expect(await sut.readiness()).toEqual({ status: 'ok', checks: { postgres: 'ok', nats: 'ok' } });
    });

    it('should be unavailable, naming the check, when NATS does not answer', async () => {
      const sut = new HealthService(database(up), remoteBus(down));
      expect(await sut.readiness()).toEqual({ status: 'unavailable', checks: { postgres: 'ok', nats: 'failed: connection refused' } });
    });

    it('should be unavailable when Postgres does not answer, whatever the bus', async () => {
      const sut = new HealthService(database(down), new InProcessBus());
      expect(await sut.readiness()).toEqual({ status: 'unavailable', checks: { postgres: 'failed: connection refused', bus: 'in-process' } });
    });
  });

  describe('draining (SIGTERM)', () => {
    it('should answer unavailable from then on although Postgres and NATS answer, and stay live', async () => {
      const sut = new HealthService(database(up), remoteBus(up));
      sut.startDraining();
      expect(await sut.readiness()).toEqual({ status: 'unavailable', checks: { shutdown: 'draining: finishing the requests in flight' } });
      expect(sut.liveness().status).toBe('ok');
    });
  });

  describe('liveness', () => {
    it('should answer ok with the version it runs', () => {
      expect(new HealthService(database(down), new InProcessBus()).liveness()).toEqual({
        status: 'ok',
        version: expect.stringMatching(/^\d+\.\d+\.\d+/),
        commit: 'unknown',
      });
    });
  });
});
