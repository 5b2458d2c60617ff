import { openBundle, sealBundle, SessionBundleError } from './session-bundle';

// The smallest parameters the opener accepts keep the spec quick; the routes use BUNDLE_KDF.
const QUICK = { N: 2 ** 14, r: 8, p: 1 };
const CONTENT = { session: { creds: '{"me":{"id":"5511:1@s.whatsapp.net"}}', keys: [{ type: 'session', id: 'a', value: 'x' }] } };

async function reason(open: Promise<unknown>): Promise<string> {
  try {
    await open;
  } catch (error) {
    if (error instanceof SessionBundleError) return error.reason;
    throw error;
  }
  return 'opened';
}

/** Flips one bit of the base64url part `index` (0 prefix, 1 header, 2 ciphertext) at character `at`. */
function flip(bundle: string, index: number, at: number): string {
  const parts = bundle.split('.');
  const bytes = Buffer.from(parts[index], 'base64url');
  bytes[at] ^= 1;
  parts[index] = bytes.toString('base64url');
  return parts.join('.');
}

describe('session bundle', () => {
  it('should open what it sealed with the same passphrase, and never hold the content in clear', async () => {
    const sut = await sealBundle(CONTENT, 'correct horse battery staple', QUICK);
    expect(sut).toMatch(/^gwsession1\.[\w-]+\.[\w-]+$/);
    expect(sut).not.toContain('5511');
    expect(await openBundle(sut, 'correct horse battery staple')).toEqual(CONTENT);
  });

  it('should use a fresh salt and nonce each time', async () => {
    const [a, b] = await Promise.all([sealBundle(CONTENT, 'passphrase-one', QUICK), sealBundle(CONTENT, 'passphrase-one', QUICK)]);
    expect(a.split('.')[1]).not.toBe(b.split('.')[1]);
    expect(a.split('.')[2]).not.toBe(b.split('.')[2]);
  });

  it('should answer cannot_decrypt alike for a wrong passphrase, a changed ciphertext and a changed header', async () => {
    const sut = await sealBundle(CONTENT, 'passphrase-one', QUICK);
    expect(await reason(openBundle(sut, 'passphrase-two'))).toBe('cannot_decrypt');
    expect(await reason(openBundle(flip(sut, 2, 3), 'passphrase-one'))).toBe('cannot_decrypt');
    // The header is authenticated: another salt (still well-formed) derives another key.
    const header = JSON.parse(Buffer.from(sut.split('.')[1], 'base64url').toString());
    header.kdf.salt = Buffer.alloc(16, 7).toString('base64url');
    const changed = ['gwsession1', Buffer.from(JSON.stringify(header)).toString('base64url'), sut.split('.')[2]].join('.');
    expect(await reason(openBundle(changed, 'passphrase-one'))).toBe('cannot_decrypt');
    // So is anything else in it, e.g. a field added that the opener ignores.
    header.kdf.salt = JSON.parse(Buffer.from(sut.split('.')[1], 'base64url').toString()).kdf.salt;
    header.note = 'added';
    const noted = ['gwsession1', Buffer.from(JSON.stringify(header)).toString('base64url'), sut.split('.')[2]].join('.');
    expect(await reason(openBundle(noted, 'passphrase-one'))).toBe('cannot_decrypt');
  });

  it('should refuse malformed bundles before deriving a key, and scrypt parameters out of bounds', async () => {
    const sut = await sealBundle(CONTENT, 'passphrase-one', QUICK);
    for (const bad of ['', 'hello', 'gwsession1.abc', `gwsession2.${sut.split('.').slice(1).join('.')}`, `gwsession1.!!.${sut.split('.')[2]}`]) {
      expect(await reason(openBundle(bad, 'passphrase-one'))).toBe('malformed');
    }
    const header = JSON.parse(Buffer.from(sut.split('.')[1], 'base64url').toString());
    for (const kdf of [{ N: 2 ** 30 }, { N: 1000 }, { r: 64 }, { p: 1000 }]) {
      const bomb = ['gwsession1', Buffer.from(JSON.stringify({ ...header, kdf: { ...header.kdf, ...kdf } })).toString('base64url'), sut.split('.')[2]].join(
        '.',
      );
      expect(await reason(openBundle(bomb, 'passphrase-one'))).toBe('malformed');
    }
  });
});
