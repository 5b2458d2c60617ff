import { ConfigError, EnvReader } from '@gw/platform';
import { parseManagedProxyPools, readManagedProxyPools } from './managed-proxy-pools';

describe('managed proxy pools', () => {
  describe('parseManagedProxyPools', () => {
    it('should read each proxy with its place, lowercased, the label defaulting to the city', () => {
      const sut = parseManagedProxyPools(
        JSON.stringify([
          { country: 'BR', state: 'SP', city: 'saopaulo', label: 'São Paulo', state_label: 'São Paulo', url: 'socks5://u:p@10.0.0.5:1080' },
          { country: 'pt', city: 'lisboa', url: 'http://10.0.0.6:3128' },
        ]),
      );
      expect(sut).toEqual([
        { country: 'br', state: 'sp', city: 'saopaulo', label: 'São Paulo', stateLabel: 'São Paulo', url: 'socks5://u:p@10.0.0.5:1080' },
        { country: 'pt', state: '', city: 'lisboa', label: 'lisboa', stateLabel: '', url: 'http://10.0.0.6:3128/' },
      ]);
    });

    it('should name the entry and the field at fault, never echoing a proxy URL', () => {
      expect(() => parseManagedProxyPools('{}')).toThrow('must be a JSON array');
      expect(() => parseManagedProxyPools('not json')).toThrow('must be a JSON array');
      expect(() => parseManagedProxyPools(JSON.stringify([{ country: 'bra', city: 'x', url: 'http://h:1' }]))).toThrow('entry 0: country');
      expect(() => parseManagedProxyPools(JSON.stringify([{ country: 'br', city: 'São Paulo', url: 'http://h:1' }]))).toThrow('entry 0: city');
      expect(() => parseManagedProxyPools(JSON.stringify([{ country: 'br', state: 's p', city: 'x', url: 'http://h:1' }]))).toThrow('entry 0: state');
      const secret = 'ftp://user:topsecret@h:21';
      expect(() => parseManagedProxyPools(JSON.stringify([{ country: 'br', city: 'x', url: secret }]))).toThrow(/entry 0: url must be http, https, socks5/);
      try {
        parseManagedProxyPools(JSON.stringify([{ country: 'br', city: 'x', url: 'socks5://user:topsecret@h' }]));
      } catch (error) {
        expect((error as Error).message).not.toContain('topsecret');
      }
    });
  });

  describe('readManagedProxyPools', () => {
    it('should answer no pools when neither variable is set, and fail with the variable name', () => {
      expect(readManagedProxyPools(new EnvReader({}))).toEqual([]);
      expect(readManagedProxyPools(new EnvReader({ PROXY_MANAGED_POOLS: '' }))).toEqual([]);
      expect(() => readManagedProxyPools(new EnvReader({ PROXY_MANAGED_POOLS: '[1]' }))).toThrow(ConfigError);
      expect(() => readManagedProxyPools(new EnvReader({ PROXY_MANAGED_POOLS: '[1]' }))).toThrow(/PROXY_MANAGED_POOLS/);
      expect(() => readManagedProxyPools(new EnvReader({ PROXY_MANAGED_POOLS: '[]', PROXY_MANAGED_FILE: '/x' }))).toThrow(/not both/);
      expect(() => readManagedProxyPools(new EnvReader({ PROXY_MANAGED_FILE: '/nonexistent/pools.json' }))).toThrow(/PROXY_MANAGED_FILE/);
    });
  });
});
