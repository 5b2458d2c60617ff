import type { FileRepository } from '@gw/persistence';
import { guardedConnector, SsrfGuard } from '@gw/platform';
import { ErrorCode, RpcError } from '@gw/contracts';
import { Agent, request } from 'undici';

export const MAX_MEDIA_BYTES = 64 * 1024 * 1024;

/** A file over the size a fetch allows (a BadRequest, as sends answer it; callers with a 413 tell it apart). */
export class MediaTooLargeError extends RpcError {
  constructor(maxBytes: number) {
    super(ErrorCode.BadRequest, `file is larger than ${Math.round(maxBytes / 1024 / 1024)} MB`);
  }
}
const FETCH_TIMEOUT_MS = 30_000;

/** Fetches what a send points at: a URL through the SSRF guard (size- and time-bounded), or a staged file. */
export class MediaSource {
  private readonly agent: Agent;

  constructor(
    private readonly files: FileRepository,
    /** The worker's guard (SSRF_ALLOWLIST), for every URL a tenant gives it. */
    readonly ssrf: SsrfGuard,
  ) {
    this.agent = new Agent({ connect: guardedConnector(ssrf, { timeout: 10_000 }) });
  }

  async load(instanceId: string, source: { url: string } | { fileId: string }): Promise<{ data: Buffer; mimetype: string; fileName: string }> {
    if ('fileId' in source) {
      const file = await this.files.read(source.fileId, instanceId);
      if (!file) throw new RpcError(ErrorCode.BadRequest, 'the uploaded file expired or does not exist');
      return { data: file.data, mimetype: file.mimetype, fileName: file.fileName };
    }
    return this.fetch(source.url);
  }

  async fetch(url: string, maxBytes = MAX_MEDIA_BYTES): Promise<{ data: Buffer; mimetype: string; fileName: string }> {
    try {
      await this.ssrf.check(url);
    } catch (error) {
      throw new RpcError(ErrorCode.BadRequest, `file URL refused: ${(error as Error).message}`);
    }
    let response;
    try {
      response = await request(url, {
        dispatcher: this.agent,
        maxRedirections: 0,
        signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
        headersTimeout: FETCH_TIMEOUT_MS,
        bodyTimeout: FETCH_TIMEOUT_MS,
      } as never);
    } catch (error) {
      throw new RpcError(ErrorCode.BadRequest, `could not download the file: ${(error as Error).message}`);
    }
    if (response.statusCode < 200 || response.statusCode >= 300) {
      await response.body.dump().catch(() => undefined);
      throw new RpcError(ErrorCode.BadRequest, `could not download the file: the server answered ${response.statusCode}`);
    }
    const declared = Number(response.headers['content-length'] ?? 0);
    if (declared > maxBytes) {
      await response.body.dump().catch(() => undefined);
      throw new MediaTooLargeError(maxBytes);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of response.body) {
      size += (chunk as Buffer).length;
      if (size > maxBytes) {
        response.body.destroy();
        throw new MediaTooLargeError(maxBytes);
      }
      chunks.push(chunk as Buffer);
    }
    const contentType = String(response.headers['content-type'] ?? '')
      .split(';')[0]
      .trim();
    const fileName = lastSegment(url) || 'file';
    return { data: Buffer.concat(chunks), mimetype: contentType || 'application/octet-stream', fileName };
  }

  async close(): Promise<void> {
    await this.agent.close().catch(() => undefined);
  }
}

/** The URL's last path segment, decoded; as written when its percent-encoding is broken (`/%ZZ.pdf`). */
function lastSegment(url: string): string {
  const segment = new URL(url).pathname.split('/').pop() ?? '';
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
