// HTTP JSON control API (documented in libs/wa-sim/README.md). Every handler validates its
// input; errors map to `{error}` with a 4xx status and never take the simulator down.
import { createServer } from 'http';
import type { IncomingMessage, Server, ServerResponse } from 'http';
import type { AddressInfo } from 'net';
import { BufferJSON } from './baileys';
import { SimError } from './errors';
import { parseFaultRequest } from './faults';
import type { Handler } from './route-spec';
import { groupRoutes } from './groups-routes';
import { newsletterRoutes } from './newsletter-routes';
import type { WaSimulator } from './simulator';
import type { SendMediaInput } from './simulator-api-types';

type Params = Record<string, string>;

interface Route {
  method: string;
  pattern: RegExp;
  keys: string[];
  handler: Handler;
}

const MAX_BODY = 64 * 1024 * 1024;

/** A non-JSON response (media bytes). */
export class RawResponse {
  constructor(
    readonly body: Buffer,
    readonly contentType: string,
  ) {}
}

function compile(method: string, path: string, handler: Handler): Route {
  const keys: string[] = [];
  const pattern = new RegExp(
    '^' +
      path.replace(/\{(\w+)\}/g, (_m, key: string) => {
        keys.push(key);
        return '([^/]+)';
      }) +
      '/?$',
  );
  return { method, pattern, keys, handler };
}

function str(body: Record<string, unknown>, key: string, required = true): string {
  const value = body[key];
  if (value === undefined || value === null || value === '') {
    if (required) throw new SimError(400, `${key} is required`);
    return '';
  }
  if (typeof value !== 'string' && typeof value !== 'number') throw new SimError(400, `${key} must be a string`);
  return String(value);
}

function optMs(value: unknown, key: string): number | null | undefined {
  if (value === undefined) return undefined;
  if (value === null || value === false) return null;
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0) throw new SimError(400, `${key} must be a non-negative number or null`);
  return n;
}

async function waitFor<T>(read: () => T[], waitMs: number): Promise<T[]> {
  const deadline = Date.now() + Math.min(waitMs, 60_000);
  let result = read();
  while (result.length === 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    result = read();
  }
  return result;
}

export function buildRoutes(sim: WaSimulator): Route[] {
  return [
    compile('GET', '/sim/health', () => sim.health()),
    compile('POST', '/sim/accounts', ({ body }) =>
      sim.createAccount({
        phone: str(body, 'phone'),
        name: str(body, 'name', false) || undefined,
        business: body.business === true || body.business === 'true',
      }),
    ),
    compile('GET', '/sim/accounts', () => sim.listAccounts()),
    compile('GET', '/sim/accounts/{phone}', ({ params }) => sim.getAccount(params.phone)),
    compile('POST', '/sim/accounts/{phone}/archive', ({ params, body }) => ({ archived: sim.phoneState.archiveMessages(params.phone, body.messages) })),
    compile('GET', '/sim/accounts/{phone}/peer-requests', ({ params }) => sim.phoneState.peerRequests(params.phone)),
    compile('POST', '/sim/accounts/{phone}/history', ({ params, body }) => {
      sim.phoneState.setHistory(params.phone, body.history === null ? undefined : (body.history as Array<Record<string, unknown>>));
      return { ok: true };
    }),
    compile('POST', '/sim/accounts/{phone}/status-privacy', ({ params, body }) =>
      sim.phoneState.setStatusPrivacy(params.phone, str(body, 'type'), (body.list ?? []) as string[]),
    ),
    compile('POST', '/sim/accounts/{phone}/auto-receipts', ({ params, body }) => {
      sim.phoneState.setAutoReceipts(params.phone, { deliveredMs: optMs(body.deliveredMs, 'deliveredMs'), readMs: optMs(body.readMs, 'readMs') });
      return { ok: true };
    }),
    compile('POST', '/sim/accounts/{phone}/provision', ({ params, body }) => {
      const { device, creds } = sim.provisionDevice(params.phone, undefined, {
        os: str(body, 'os', false) || undefined,
        platformType: str(body, 'platformType', false) || undefined,
        synced: body.synced !== false,
      });
      // Creds serialised with Baileys' BufferJSON.replacer: revive with BufferJSON.reviver.
      return { device, creds: JSON.parse(JSON.stringify(creds, BufferJSON.replacer)) as unknown };
    }),
    compile('POST', '/sim/scan', ({ body }) => sim.scanQr(str(body, 'phone'), str(body, 'qr'))),
    compile('POST', '/sim/pair-code', ({ body }) => sim.enterPairingCode(str(body, 'phone'), str(body, 'code'))),
    compile('POST', '/sim/accounts/{phone}/send', ({ params, body }) => {
      const message = body.message as Record<string, unknown> | undefined;
      const text = typeof body.text === 'string' ? body.text : undefined;
      return sim.sendMessage(params.phone, str(body, 'to'), { text, message }, { id: str(body, 'id', false) || undefined });
    }),
    compile('GET', '/sim/accounts/{phone}/inbox', async ({ params, query }) => {
      const since = Number(query.get('since') ?? '0') || 0;
      const includeOwn = query.get('includeOwn') === 'true' || query.get('includeOwn') === '1';
      const waitMs = Number(query.get('waitMs') ?? '0') || 0;
      sim.getAccount(params.phone);
      return waitFor(() => sim.phoneState.inbox(params.phone, { since, includeOwn }), waitMs);
    }),
    compile('GET', '/sim/accounts/{phone}/outbox', ({ params }) => sim.phoneState.outbox(params.phone)),
    compile('GET', '/sim/accounts/{phone}/decrypt-failures', ({ params }) => sim.phoneState.decryptFailures(params.phone)),
    compile('GET', '/sim/accounts/{phone}/privacy-tokens', ({ params }) => sim.phoneState.privacyTokensOf(params.phone)),
    compile('GET', '/sim/accounts/{phone}/inbox/{id}/media', async ({ params }) => {
      const { bytes, mimetype } = await sim.inboxMedia(params.phone, params.id);
      return new RawResponse(bytes, mimetype);
    }),
    compile('POST', '/sim/accounts/{phone}/send-media', ({ params, body }) =>
      sim.sendMedia(params.phone, {
        to: str(body, 'to'),
        type: str(body, 'type') as SendMediaInput['type'],
        data: str(body, 'data'),
        mimetype: str(body, 'mimetype', false) || undefined,
        caption: str(body, 'caption', false) || undefined,
        fileName: str(body, 'fileName', false) || undefined,
        ptt: body.ptt === true,
        seconds: body.seconds === undefined ? undefined : Number(body.seconds),
      }),
    ),
    compile('POST', '/sim/accounts/{phone}/call', ({ params, body }) => {
      const caller = sim.registry.resolveUser(params.phone);
      const to = str(body, 'to');
      const callee = sim.registry.resolveUser(to.includes('@') ? to : to.replace(/\D/g, ''));
      if (!caller || !callee) throw new SimError(404, 'unknown caller or callee');
      const timeoutMs = body.timeoutMs === undefined ? undefined : Number(body.timeoutMs);
      return sim.calls.offer(caller, callee, { video: body.video === true, timeoutMs });
    }),
    compile('POST', '/sim/calls/{id}/end', ({ params, body }) => sim.calls.end(params.id, body.reason === 'timeout' ? 'timeout' : 'terminate')),
    compile('GET', '/sim/accounts/{phone}/calls', ({ params }) => {
      sim.getAccount(params.phone);
      return sim.calls.list(sim.getAccount(params.phone).phone);
    }),
    compile('GET', '/sim/media/ca.pem', () => new RawResponse(Buffer.from(sim.media?.caCertificate ?? ''), 'application/x-pem-file')),
    compile('GET', '/sim/accounts/{phone}/app-state', ({ params }) => sim.phoneState.appState(params.phone)),
    compile('GET', '/sim/accounts/{phone}/address-book', async ({ params }) => ({ contacts: await sim.phoneState.addressBook(params.phone) })),
    compile('GET', '/sim/accounts/{phone}/chats', async ({ params }) => ({ chats: await sim.phoneState.chats(params.phone) })),
    compile('GET', '/sim/accounts/{phone}/picture', ({ params }) => {
      const picture = sim.phoneState.profilePicture(params.phone);
      if (!picture) throw new SimError(404, 'no profile picture');
      return new RawResponse(picture.bytes, 'image/jpeg');
    }),
    compile('POST', '/sim/accounts/{phone}/picture', ({ params, body }) => {
      const jpeg = typeof body.jpeg === 'string' && body.jpeg ? Buffer.from(body.jpeg, 'base64') : null;
      const picture = sim.phoneState.setProfilePicture(params.phone, jpeg);
      return { id: picture?.id ?? '', removed: !picture };
    }),
    compile('GET', '/sim/accounts/{phone}/notes', async ({ params }) => ({ notes: await sim.phoneState.notes(params.phone) })),
    compile('POST', '/sim/accounts/{phone}/notes', async ({ params, body }) =>
      sim.phoneState.writeNote(params.phone, str(body, 'chatJid'), typeof body.text === 'string' ? body.text : ''),
    ),
    compile('GET', '/sim/accounts/{phone}/blocklist', ({ params }) => ({ blocklist: sim.phoneState.blocklist(params.phone) })),
    compile('POST', '/sim/accounts/{phone}/blocklist', ({ params, body }) => {
      const action = str(body, 'action');
      if (action !== 'block' && action !== 'unblock') throw new SimError(400, 'action must be block|unblock');
      return sim.phoneState.setBlocked(params.phone, str(body, 'jid'), action === 'block');
    }),
    compile('POST', '/sim/accounts/{phone}/app-state', ({ params, body }) =>
      sim.phoneState.appStateModify(
        params.phone,
        str(body, 'jid', false),
        body.mod as Parameters<WaSimulator['phoneState']['appStateModify']>[2],
        str(body, 'collection', false) || undefined,
      ),
    ),
    compile('POST', '/sim/accounts/{phone}/receipts', ({ params, body }) => {
      const type = str(body, 'type');
      if (type !== 'delivered' && type !== 'read' && type !== 'played') throw new SimError(400, 'type must be delivered|read|played');
      const ids = Array.isArray(body.ids) ? (body.ids as unknown[]).map(String) : typeof body.id === 'string' ? [body.id] : [];
      if (!ids.length) throw new SimError(400, 'ids is required');
      return sim.phoneState.sendReceipts(params.phone, str(body, 'chat'), ids, type);
    }),
    compile('GET', '/sim/devices', ({ query }) => {
      const phone = query.get('phone');
      if (!phone) throw new SimError(400, 'phone query parameter is required');
      return sim.listDevices(phone);
    }),
    compile('GET', '/sim/devices/{jid}', ({ params }) => sim.getDevice(params.jid)),
    compile('POST', '/sim/devices/{jid}/drop', ({ params }) => {
      sim.dropDevice(params.jid);
      return { ok: true };
    }),
    compile('POST', '/sim/devices/{jid}/logout', ({ params, body }) => {
      const via = body.via === 'failure' ? 'failure' : 'stream-error';
      sim.logout(params.jid, via);
      return { ok: true };
    }),
    compile('POST', '/sim/faults', ({ body }) => sim.injectFault(parseFaultRequest(body))),
    compile('GET', '/sim/faults', () => sim.listFaults()),
    compile('GET', '/sim/wa-version', () => new RawResponse(Buffer.from(sim.waWebVersion()), 'text/javascript')),
    compile('DELETE', '/sim/faults', () => sim.injectFault({ kind: 'clear' })),
    compile('DELETE', '/sim/faults/{id}', ({ params }) => {
      if (!sim.removeFault(Number(params.id))) throw new SimError(404, `no fault ${params.id}`);
      return { ok: true };
    }),
    compile('GET', '/sim/handshakes', () => sim.handshakes()),
    compile('DELETE', '/sim/handshakes', () => sim.handshakes({ resetPeak: true })),
    compile('POST', '/sim/restart', async ({ body }) => {
      await sim.restart(Number(body.downMs ?? 0) || 0);
      return { ok: true };
    }),
    ...groupRoutes(sim.groups, sim).map((r) => compile(r.method, r.path, r.handler)),
    ...newsletterRoutes(sim.newsletters, sim).map((r) => compile(r.method, r.path, r.handler)),
    ...sim.business.routes().map((r) => compile(r.method, r.path, r.handler)),
    ...sim.calls.routes().map((r) => compile(r.method, r.path, r.handler)),
    ...sim.router.statuses.routes().map((r) => compile(r.method, r.path, r.handler)),
  ];
}

async function readBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) throw new SimError(413, 'body too large');
    chunks.push(chunk as Buffer);
  }
  if (!chunks.length) return {};
  const text = Buffer.concat(chunks).toString('utf-8').trim();
  if (!text) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new SimError(400, 'body is not valid JSON');
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new SimError(400, 'body must be a JSON object');
  return parsed as Record<string, unknown>;
}

function send(res: ServerResponse, status: number, payload: unknown): void {
  const body = JSON.stringify(payload ?? null);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

export class ControlApi {
  private server?: Server;
  private readonly routes: Route[];

  constructor(private readonly sim: WaSimulator) {
    this.routes = buildRoutes(sim);
  }

  async listen(port: number, host: string): Promise<string> {
    this.server = createServer((req, res) => {
      void this.handle(req, res);
    });
    await new Promise<void>((resolve, reject) => {
      this.server?.once('error', reject);
      this.server?.listen(port, host, () => resolve());
    });
    const address = this.server.address() as AddressInfo;
    return `http://${host}:${address.port}`;
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections?.();
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      const url = new URL(req.url ?? '/', 'http://sim');
      const method = (req.method ?? 'GET').toUpperCase();
      let pathMatched = false;
      for (const route of this.routes) {
        const match = route.pattern.exec(url.pathname);
        if (!match) continue;
        pathMatched = true;
        if (route.method !== method) continue;
        const params: Params = {};
        route.keys.forEach((key, i) => (params[key] = decodeURIComponent(match[i + 1])));
        const body = method === 'GET' || method === 'DELETE' ? {} : await readBody(req);
        const result = await route.handler({ params, query: url.searchParams, body });
        // Groups, newsletters, sends… anything but a read may change what a stateDir keeps.
        if (method !== 'GET') this.sim.stateChanged();
        if (result instanceof RawResponse) {
          res.writeHead(200, { 'content-type': result.contentType, 'content-length': result.body.length });
          res.end(result.body);
          return;
        }
        send(res, 200, result);
        return;
      }
      send(res, pathMatched ? 405 : 404, { error: pathMatched ? 'method not allowed' : `no route ${method} ${url.pathname}` });
    } catch (err) {
      if (err instanceof SimError) {
        send(res, err.status, { error: err.message });
        return;
      }
      this.sim.logger.error({ err: (err as Error).message, stack: (err as Error).stack }, 'control api error');
      send(res, 500, { error: (err as Error).message || 'internal error' });
    }
  }
}
