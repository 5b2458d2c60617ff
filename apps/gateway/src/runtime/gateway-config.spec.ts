import { EnvReader } from '@gw/platform';
import { loadGatewayConfig } from './gateway-config';

const load = (env: Record<string, string>) => loadGatewayConfig(new EnvReader(env), []);

describe('loadGatewayConfig', () => {
  describe('ADMIN_TOKEN', () => {
    it('should take a long random token, or none (then one is generated)', () => {
      const token = 'f3a9c1d7e5b2a8c4d6e0f1a3b5c7d9e2';
      expect(load({ ADMIN_TOKEN: token }).adminToken).toBe(token);
      expect(load({}).adminToken).toBeUndefined();
    });

    it('should refuse a token shorter than 32 characters, naming the variable', () => {
      expect(() => load({ ADMIN_TOKEN: 'short-token' })).toThrow(/ADMIN_TOKEN: must have at least 32 characters/);
    });

    it.each([
      'CHANGE_ME',
      'CHANGE_ME_CHANGE_ME_CHANGE_ME_CHANGE_ME',
      'please-replace-me-with-a-random-token!',
      'x'.repeat(40),
      'your-admin-token-goes-here-0123456789',
    ])('should refuse the placeholder %s', (token) => {
      expect(() => load({ ADMIN_TOKEN: token })).toThrow(/ADMIN_TOKEN/);
    });
  });

  describe('TRUST_PROXY', () => {
    it('should trust no proxy by default, and the addresses and CIDRs named', () => {
      expect(load({}).trustProxy).toEqual([]);
      expect(load({ TRUST_PROXY: ' 10.0.0.5, 172.16.0.0/12,fd00::/8 ' }).trustProxy).toEqual(['10.0.0.5', '172.16.0.0/12', 'fd00::/8']);
    });

    it('should refuse what is not an address or a CIDR, naming the variable', () => {
      expect(() => load({ TRUST_PROXY: 'balancer.local' })).toThrow('Invalid environment variable TRUST_PROXY: "balancer.local" is not a CIDR');
      expect(() => load({ TRUST_PROXY: '10.0.0.0/33' })).toThrow(/Invalid environment variable TRUST_PROXY: /);
    });
  });

  it('should keep the sandbox data and its embedded Postgres apart from npm start', () => {
    expect(load({})).toMatchObject({ sandbox: false, dataDir: './.data', embeddedPostgresPort: 54329 });
    expect(loadGatewayConfig(new EnvReader({}), ['--sandbox'])).toMatchObject({ sandbox: true, dataDir: './.data/sandbox', embeddedPostgresPort: 54339 });
    expect(loadGatewayConfig(new EnvReader({ DATA_DIR: '/srv/gw' }), ['--sandbox']).dataDir).toBe('/srv/gw');
  });

  it('should default PUBLIC_BASE_URL to this port on localhost', () => {
    expect(load({ PORT: '9090' }).publicBaseUrl).toBe('http://localhost:9090');
    expect(load({ PUBLIC_BASE_URL: 'https://wa.example.com' }).publicBaseUrl).toBe('https://wa.example.com');
  });
});
