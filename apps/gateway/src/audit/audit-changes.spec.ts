import { maskedChanges } from './audit-changes';

describe('maskedChanges', () => {
  it('should mask string fields named like credentials, at any depth, and keep flags and counts', () => {
    const sut = maskedChanges({
      access_token: 'cw-secret',
      agent: { apikey: 'sk-1', maxTokens: 200, name: 'Loja' },
      openai_apikey: 'sk-2',
      secret: 'whsec_x',
      password: 'p',
      includeToken: true,
      emptyToken: '',
    });
    expect(sut).toEqual({
      access_token: '[masked]',
      agent: { apikey: '[masked]', maxTokens: 200, name: 'Loja' },
      openai_apikey: '[masked]',
      secret: '[masked]',
      password: '[masked]',
      includeToken: true,
      emptyToken: '',
    });
  });

  it("should mask a moved session's passphrase and bundle (issue #40), not other fields that merely contain the word", () => {
    expect(maskedChanges({ passphrase: 'correct horse battery staple', bundle: 'gwsession1.e30.AAAA', bundleName: 'x' })).toEqual({
      passphrase: '[masked]',
      bundle: '[masked]',
      bundleName: 'x',
    });
  });

  it("should mask URLs' user info and credential query parameters, keeping host, path and the rest", () => {
    expect(maskedChanges({ url: 'https://h.example/hook?token=abc&x=1' })).toEqual({ url: 'https://h.example/hook?token=[masked]&x=1' });
    expect(maskedChanges({ url: 'amqp://guest:guest-pass@broker:5672/vh' }).url).toBe('amqp://guest:[masked]@broker:5672/vh');
    expect(maskedChanges({ url: 'https://only-a-token@h.example/x' }).url).toBe('https://***@h.example/x');
    expect(maskedChanges({ proxy_url: 'http://u:p@proxy:3128' }).proxy_url).toBe('http://u:[masked]@proxy:3128');
    expect(maskedChanges({ urls: ['https://h.example/?api_key=k'] }).urls).toEqual(['https://h.example/?api_key=[masked]']);
  });

  it('should cut long strings and long lists, and answer {} for anything but an object', () => {
    const sut = maskedChanges({ text: 'x'.repeat(2_000), list: Array.from({ length: 100 }, (_, i) => i) });
    expect((sut.text as string).length).toBe(501);
    expect(sut.list).toHaveLength(50);
    expect(maskedChanges(undefined)).toEqual({});
    expect(maskedChanges([1])).toEqual({});
  });
});
