/** `--otlp 1`: the loopback collector the orchestrator runs, and tracing started in ours' processes. */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A loopback OTLP/HTTP collector (`--otlp 1`): counts the exports, spans and bytes it takes. */
export async function startOtlpCollector(): Promise<{ url: string; counts: { exports: number; spans: number; bytes: number }; close(): void }> {
  const counts = { exports: 0, spans: 0, bytes: 0 };
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks);
      counts.exports++;
      counts.bytes += body.length;
      try {
        const exported = JSON.parse(body.toString('utf8')) as { resourceSpans?: Array<{ scopeSpans?: Array<{ spans?: unknown[] }> }> };
        for (const resource of exported.resourceSpans ?? []) for (const scope of resource.scopeSpans ?? []) counts.spans += scope.spans?.length ?? 0;
      } catch {
        // Not JSON: counted as an export, its spans unknown.
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, counts, close: () => server.close() };
}

/** Tracing on in ours' processes when the orchestrator set the endpoint (`--otlp 1`); a no-op otherwise. */
export async function startTracingFromEnv(): Promise<void> {
  const { EnvReader, readTracingConfig, startTracing } = await import('@gw/platform');
  startTracing(readTracingConfig(new EnvReader(process.env)));
}
