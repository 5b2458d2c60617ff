import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A 1×1 PNG: what the files server answers on any path it has no other reply for. */
export const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
/** A minimal PDF document. */
export const pdf = Buffer.from('%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n');

export interface FileReply {
  contentType: string;
  body: string | Buffer;
}

/** An HTML page (link previews read its title and og: tags). */
export const htmlPage = (html: string): FileReply => ({ contentType: 'text/html', body: html });

export interface FilesServer {
  /** `http://127.0.0.1:<port>`, inside the stack's SSRF allowlist (127.0.0.0/8). */
  url: string;
  close(): Promise<void>;
}

/**
 * A loopback HTTP server for the media and pages that sends fetch. A path named in `routes` answers
 * that reply; a key starting with `*` matches the end of the path (`'*.pdf'`); any other path answers
 * the PNG.
 */
export async function startFilesServer(routes: Record<string, FileReply> = {}): Promise<FilesServer> {
  const suffixes = Object.entries(routes).filter(([key]) => key.startsWith('*'));
  const server = createServer((request, response) => {
    const path = request.url ?? '';
    const reply = routes[path] ?? suffixes.find(([key]) => path.endsWith(key.slice(1)))?.[1] ?? { contentType: 'image/png', body: png };
    response.writeHead(200, { 'content-type': reply.contentType });
    response.end(reply.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
