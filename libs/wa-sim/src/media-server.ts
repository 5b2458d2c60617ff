// HTTPS media server (B12): Baileys uploads encrypted media to `https://<media_conn host>/mms/...`
// and downloads from the `url` it got back. We only store bytes; phones encrypt and decrypt with
// the same AES-CBC + HMAC scheme (media keys from Baileys' getMediaKeys) when they send or inspect media.
import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from 'crypto';
import { createServer } from 'https';
import type { Server } from 'https';
import type { IncomingMessage, ServerResponse } from 'http';
import type { AddressInfo } from 'net';
import { getMediaKeys } from './baileys';
import type { MediaType } from './baileys';
import { MEDIA_TLS_CERT, MEDIA_TLS_KEY } from './media-cert';
import { SimError } from './errors';

const MAX_UPLOAD = 100 * 1024 * 1024;
const MAX_STORED_BYTES = 512 * 1024 * 1024;

export interface StoredMedia {
  bytes: Buffer;
  mediaType: string;
  storedAt: number;
}

export interface EncryptedMedia {
  mediaKey: Buffer;
  encrypted: Buffer;
  fileSha256: Buffer;
  fileEncSha256: Buffer;
  fileLength: number;
}

/** Encrypts like WhatsApp clients: AES-256-CBC with keys from HKDF(mediaKey), plus a 10-byte HMAC. */
export async function encryptMedia(plain: Buffer, mediaType: MediaType): Promise<EncryptedMedia> {
  const mediaKey = randomBytes(32);
  const { iv, cipherKey, macKey } = await getMediaKeys(mediaKey, mediaType);
  const cipher = createCipheriv('aes-256-cbc', cipherKey, iv);
  const enc = Buffer.concat([cipher.update(plain), cipher.final()]);
  const mac = createHmac('sha256', macKey as Buffer)
    .update(iv)
    .update(enc)
    .digest()
    .subarray(0, 10);
  const encrypted = Buffer.concat([enc, mac]);
  return {
    mediaKey,
    encrypted,
    fileSha256: createHash('sha256').update(plain).digest(),
    fileEncSha256: createHash('sha256').update(encrypted).digest(),
    fileLength: plain.length,
  };
}

export async function decryptMedia(encrypted: Buffer, mediaKey: Uint8Array, mediaType: MediaType): Promise<Buffer> {
  const { iv, cipherKey, macKey } = await getMediaKeys(mediaKey, mediaType);
  const enc = encrypted.subarray(0, -10);
  const mac = createHmac('sha256', macKey as Buffer)
    .update(iv)
    .update(enc)
    .digest()
    .subarray(0, 10);
  if (!mac.equals(encrypted.subarray(-10))) throw new SimError(422, 'media MAC mismatch');
  const decipher = createDecipheriv('aes-256-cbc', cipherKey, iv);
  return Buffer.concat([decipher.update(enc), decipher.final()]);
}

export class MediaServer {
  private server?: Server;
  private readonly files = new Map<string, StoredMedia>();
  private storedBytes = 0;
  host = '127.0.0.1';
  port = 0;

  /** `host:port` for `<media_conn><host hostname>` (Baileys prefixes https://). */
  get hostname(): string {
    return `${this.host.includes(':') ? `[${this.host}]` : this.host}:${this.port}`;
  }

  get caCertificate(): string {
    return MEDIA_TLS_CERT;
  }

  async listen(port: number, host: string): Promise<void> {
    this.host = host;
    this.server = createServer({ key: MEDIA_TLS_KEY, cert: MEDIA_TLS_CERT }, (req, res) => {
      void this.handle(req, res).catch(() => {
        if (!res.headersSent) res.writeHead(500);
        res.end();
      });
    });
    await new Promise<void>((resolve, reject) => {
      this.server?.once('error', reject);
      this.server?.listen(port, host, () => resolve());
    });
    this.port = (this.server.address() as AddressInfo).port;
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections?.();
  }

  /** Stores bytes and returns the direct path and full URL clients put in messages. */
  store(bytes: Buffer, mediaType: string): { directPath: string; url: string } {
    const id = randomBytes(12).toString('hex');
    const directPath = `/v/t62.sim-24/${id}.enc?ccb=11-4&oh=${randomBytes(8).toString('hex')}&oe=${Math.floor(Date.now() / 1000) + 30 * 86_400}`;
    this.files.set(id, { bytes, mediaType, storedAt: Date.now() });
    this.storedBytes += bytes.length;
    while (this.storedBytes > MAX_STORED_BYTES && this.files.size > 1) {
      const [oldest, entry] = this.files.entries().next().value as [string, StoredMedia];
      this.files.delete(oldest);
      this.storedBytes -= entry.bytes.length;
    }
    return { directPath, url: `https://${this.hostname}${directPath}` };
  }

  /** Bytes for a direct path or URL previously returned by store(). */
  fetch(pathOrUrl: string): StoredMedia | undefined {
    const match = /\/v\/t62\.sim-24\/([0-9a-f]+)\.enc/.exec(pathOrUrl);
    return match ? this.files.get(match[1]) : undefined;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', `https://${this.hostname}`);
    if (req.method === 'POST' && url.pathname.startsWith('/mms/')) {
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of req) {
        size += (chunk as Buffer).length;
        if (size > MAX_UPLOAD) {
          res.writeHead(413, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: 'too large' }));
          return;
        }
        chunks.push(chunk as Buffer);
      }
      const mediaType = url.pathname.split('/')[2] ?? 'file';
      const { directPath, url: fullUrl } = this.store(Buffer.concat(chunks), mediaType);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ url: fullUrl, direct_path: directPath }));
      return;
    }
    if (req.method === 'GET' || req.method === 'HEAD') {
      const file = this.fetch(url.pathname);
      if (!file) {
        res.writeHead(404);
        res.end();
        return;
      }
      let body = file.bytes;
      const range = /^bytes=(\d*)-(\d*)$/.exec(req.headers.range ?? '');
      if (range) {
        const start = range[1] ? Number(range[1]) : 0;
        const end = range[2] ? Math.min(Number(range[2]), body.length - 1) : body.length - 1;
        body = body.subarray(start, end + 1);
        res.writeHead(206, {
          'content-type': 'application/octet-stream',
          'content-length': body.length,
          'content-range': `bytes ${start}-${end}/${file.bytes.length}`,
        });
      } else {
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': body.length });
      }
      res.end(req.method === 'HEAD' ? undefined : body);
      return;
    }
    res.writeHead(405);
    res.end();
  }
}
