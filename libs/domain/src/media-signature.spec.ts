import { checkMediaBytes, sniffMediaType } from './media-signature';

const png = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
const html = Buffer.from('\n  <!DOCTYPE html><html><body>hi</body></html>');
const mp4 = (brand: string) => Buffer.concat([Buffer.from([0, 0, 0, 24]), Buffer.from(`ftyp${brand}`), Buffer.alloc(16)]);

describe(checkMediaBytes.name, () => {
  it('should read the real type from the signature', () => {
    expect(sniffMediaType(png)).toBe('image/png');
    expect(sniffMediaType(Buffer.from('ffd8ffe000104a46', 'hex'))).toBe('image/jpeg');
    expect(sniffMediaType(Buffer.from('RIFF\0\0\0\0WEBPVP8 '))).toBe('image/webp');
    expect(sniffMediaType(mp4('isom'))).toBe('video/mp4');
    expect(sniffMediaType(mp4('M4A '))).toBe('audio/mp4');
    expect(sniffMediaType(Buffer.from([0xff, 0xfb, 0x90, 0x64]))).toBe('audio/mpeg');
    expect(sniffMediaType(Buffer.from([0xff, 0xf1, 0x50, 0x80]))).toBe('audio/aac');
    expect(sniffMediaType(Buffer.from('#!AMR\n'))).toBe('audio/amr');
    expect(sniffMediaType(html)).toBe('text/html');
    expect(sniffMediaType(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'))).toBe('image/svg+xml');
    expect(sniffMediaType(Buffer.from('hello'))).toBeNull();
  });

  it('should refuse bytes that are not the kind claimed, naming the field', () => {
    expect(checkMediaBytes('image', html, 'image/png')).toEqual({
      ok: false,
      error: 'file is not an image (jpeg, png, gif or webp): its bytes are text/html, declared as image/png',
    });
    expect(checkMediaBytes('sticker', png, 'image/webp', 'sticker')).toMatchObject({ ok: false, error: expect.stringMatching(/^sticker is not a sticker/) });
    expect(checkMediaBytes('audio', Buffer.alloc(64, 1), 'audio/mpeg')).toMatchObject({ ok: false });
  });

  it('should declare the real type, keeping a claim of the same type with its parameters', () => {
    expect(checkMediaBytes('image', png, 'image/jpeg')).toEqual({ ok: true, mimetype: 'image/png' });
    expect(checkMediaBytes('audio', Buffer.from('4f67675300020000', 'hex'), 'audio/ogg; codecs=opus')).toEqual({
      ok: true,
      mimetype: 'audio/ogg; codecs=opus',
    });
    expect(checkMediaBytes('audio', mp4('isom'), '')).toEqual({ ok: true, mimetype: 'audio/mp4' });
  });

  it('should take any document, never declared as an active type', () => {
    expect(checkMediaBytes('document', html, 'text/html')).toEqual({ ok: true, mimetype: 'application/octet-stream' });
    expect(checkMediaBytes('document', html, 'application/pdf')).toEqual({ ok: true, mimetype: 'application/octet-stream' });
    expect(checkMediaBytes('document', Buffer.from('a,b\n1,2'), 'text/csv')).toEqual({ ok: true, mimetype: 'text/csv' });
    expect(checkMediaBytes('document', Buffer.from('%PDF-1.4'), 'application/octet-stream')).toEqual({ ok: true, mimetype: 'application/pdf' });
  });
});
