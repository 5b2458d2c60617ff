import { EnvReader } from '@gw/platform';
import { loadGatewayConfig } from '../runtime/gateway-config';

const load = (env: Record<string, string>) => loadGatewayConfig(new EnvReader(env), []);

describe('rate limit configuration', () => {
  it('should default to limits no client of one tenant reaches by accident', () => {
    expect(load({}).rateLimits).toEqual({
      instance: { perSecond: 100, burst: 200 },
      admin: { perSecond: 20, burst: 100 },
      unauthenticated: { perSecond: 10, burst: 50 },
    });
  });

  it('should take each variable, and 0 or off as no limit', () => {
    expect(load({ RATE_LIMIT_INSTANCE: '20/s,burst=40', RATE_LIMIT_ADMIN: 'off', RATE_LIMIT_UNAUTHENTICATED: '0' }).rateLimits).toEqual({
      instance: { perSecond: 20, burst: 40 },
      admin: undefined,
      unauthenticated: undefined,
    });
  });

  it.each(['RATE_LIMIT_INSTANCE', 'RATE_LIMIT_ADMIN', 'RATE_LIMIT_UNAUTHENTICATED'])('should stop the boot on a bad %s, naming it', (name) => {
    expect(() => load({ [name]: '20 per second' })).toThrow(new RegExp(`${name}: must be like 20/s`));
  });
});
