import { Agent, request } from 'undici';
import { createServer, type Server } from 'node:net';
import { guardedConnector, guardedLookup, SsrfError, SsrfGuard } from '../src/ssrf';

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

    // IPv6 that carries IPv4 is judged by what it carries (the forms WHATWG URL writes them in, too).
    it.each([
      ['IPv4-mapped, hex', '::ffff:7f00:1'],
      ['IPv4-mapped, metadata', '::ffff:a9fe:a9fe'],
      ['IPv4-compatible', '::127.0.0.1'],
      ['IPv4-compatible, hex', '::7f00:1'],
      ['IPv4-compatible, metadata', '::a9fe:a9fe'],
      ['SIIT', '::ffff:0:7f00:1'],
      ['NAT64', '64:ff9b::7f00:1'],
      ['NAT64, dotted', '64:ff9b::169.254.169.254'],
      ['NAT64 local use', '64:ff9b:1::808:808'],
      ['6to4 of loopback', '2002:7f00:1::1'],
      ['6to4 of 10/8', '2002:a00:1::'],
      ['Teredo, server loopback', '2001:0:7f00:1::1'],
      ['Teredo, client 10.0.0.1 (inverted)', '2001:0:808:808::f5ff:fffe'],
      ['bracketed', '[::1]'],
      ['with a zone', 'fe80::1%eth0'],
      ['not an address', '2130706433'],
    ])('should refuse %s (%s)', (_form, address) => {
      expect(sut.isAddressAllowed(address)).toBe(false);
    });

    it.each(['64:ff9b::808:808', '2002:808:808::1', '2001:0:808:808::f7f7:f7f7', '::ffff:8.8.8.8'])(
      'should allow %s, which carries a public IPv4',
      (address) => {
        expect(sut.isAddressAllowed(address)).toBe(true);
      },
    );

    it('should judge a carried IPv4 by the allowlist too', () => {
      const guard = SsrfGuard.fromList('127.0.0.2/32');
      expect(guard.isAddressAllowed('::ffff:7f00:2')).toBe(true);
      expect(guard.isAddressAllowed('::ffff:7f00:1')).toBe(false);
      expect(guard.isAddressAllowed('2002:7f00:1::')).toBe(false);
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

    // WHATWG URL writes every form of 127.0.0.1 as 127.0.0.1 (and ::ffff:127.0.0.1 as ::ffff:7f00:1).
    it.each([
      '2130706433',
      '0x7f000001',
      '0177.0.0.1',
      '127.1',
      '127.0.1',
      '0x7f.1',
      '017700000001',
      '[::ffff:127.0.0.1]',
      '[::127.0.0.1]',
      '[::ffff:0:127.0.0.1]',
      '[64:ff9b::127.0.0.1]',
    ])('should refuse http://%s/', async (host) => {
      await expect(sut.check(`http://${host}:1/`)).rejects.toThrow(/private or reserved/);
    });

    // Other schemes keep the host as written; the system resolver reads those forms, and is asked.
    it.each(['2130706433', '0x7f000001', '0177.0.0.1', '127.1', '0x7f.1', '::ffff:7f00:1', '[::7f00:1]'])('should refuse the host %s', async (host) => {
      await expect(sut.checkHost(host)).rejects.toThrow(/private or reserved/);
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

describe('guardedConnector', () => {
  let server: Server;
  let port = 0;
  let arrivals = 0;
  const sockets = new Set<import('node:net').Socket>();

  beforeAll(async () => {
    server = createServer((socket) => {
      arrivals++;
      sockets.add(socket);
      socket.end('HTTP/1.1 204 No Content\r\nconnection: close\r\n\r\n');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });

  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  // guardedLookup alone never sees a literal address: only the connector stops these.
  it.each(['127.0.0.1', '[::ffff:127.0.0.1]', '2130706433'])('should refuse a connection to the literal %s', async (host) => {
    const agent = new Agent({ connect: guardedConnector(new SsrfGuard()) });
    await expect(request(`http://${host}:${port}/x`, { dispatcher: agent })).rejects.toThrow(/private or reserved/);
    await agent.close();
    expect(arrivals).toBe(0);
  });

  it('should connect where the allowlist allows', async () => {
    const agent = new Agent({ connect: guardedConnector(SsrfGuard.fromList('127.0.0.1/32')) });
    const response = await request(`http://127.0.0.1:${port}/x`, { dispatcher: agent });
    expect(response.statusCode).toBe(204);
    await response.body.dump();
    await agent.close();
    expect(arrivals).toBe(1);
  });
});
