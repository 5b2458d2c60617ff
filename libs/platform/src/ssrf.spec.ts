import { Agent, request } from 'undici';
import { guardedLookup, SsrfError, SsrfGuard } from './ssrf';

describe(SsrfGuard.name, () => {
  const sut = new SsrfGuard();

  describe('isAddressAllowed', () => {
    it.each([
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      'fe80::1',
      'fd00::1',
      '::ffff:10.0.0.1',
      '::ffff:127.0.0.1',
    ])('should refuse %s', (address) => {
      expect(sut.isAddressAllowed(address)).toBe(false);
    });

    it.each(['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111'])('should allow %s', (address) => {
      expect(sut.isAddressAllowed(address)).toBe(true);
    });

    it('should let the allowlist through', () => {
      const guard = SsrfGuard.fromList('127.0.0.0/8, ::1/128');
      expect(guard.isAddressAllowed('127.0.0.1')).toBe(true);
      expect(guard.isAddressAllowed('::1')).toBe(true);
      expect(guard.isAddressAllowed('10.0.0.1')).toBe(false);
    });
  });

  describe('check', () => {
    it('should refuse non-http schemes and credentials', async () => {
      await expect(sut.check('ftp://example.com/x')).rejects.toBeInstanceOf(SsrfError);
      await expect(sut.check('file:///etc/passwd')).rejects.toBeInstanceOf(SsrfError);
      await expect(sut.check('http://user:pw@example.com')).rejects.toBeInstanceOf(SsrfError);
    });

    it('should refuse loopback by literal address and by name', async () => {
      await expect(sut.check('http://127.0.0.1:8080/hook')).rejects.toThrow(
        /private or reserved address \(127\.0\.0\.1\); to allow it, add its range to SSRF_ALLOWLIST/,
      );
      await expect(sut.check('http://[::1]/hook')).rejects.toThrow(/private or reserved/);
      await expect(sut.check('http://localhost/hook')).rejects.toThrow(/private or reserved/);
    });

    it('should refuse the cloud metadata address', async () => {
      await expect(sut.check('http://169.254.169.254/latest/meta-data')).rejects.toThrow(/private or reserved/);
    });

    it('should pass an allowlisted loopback URL', async () => {
      const guard = SsrfGuard.fromList('127.0.0.0/8');
      await expect(guard.check('http://127.0.0.1:9/x')).resolves.toMatchObject({ addresses: ['127.0.0.1'] });
    });
  });
});

describe('guardedLookup', () => {
  it('should refuse a connection to loopback made through undici', async () => {
    const agent = new Agent({ connect: { lookup: guardedLookup(new SsrfGuard()) } });
    await expect(request('http://localhost:1/x', { dispatcher: agent })).rejects.toThrow(/private or reserved/);
    await agent.close();
  });
});
