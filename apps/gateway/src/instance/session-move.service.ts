import { Inject, Injectable } from '@nestjs/common';
import type { Bus } from '@gw/bus';
import { Subjects } from '@gw/contracts';
import { SessionMoveRepository, SINK_KINDS, type SessionSnapshot, type SinkKind } from '@gw/persistence';
import { newToken, recordId, SsrfError, SsrfGuard } from '@gw/platform';
import { BrokerUrlError, checkBrokerHosts, parseBrokerUrl } from '@gw/relay';
import { ApiError } from '../common/api-error';
import { asyncAcceptTokens } from '../common/accept-token-cache';
import type { GatewayConfig } from '../runtime/gateway-config';
import { BUS, GATEWAY_CONFIG } from '../runtime/tokens';
import { SessionClient } from '../session/session.client';
import type { ExportSessionDto, ImportSessionDto } from './dto/session-move.dto';
import type { SessionExportedResponse, SessionImportedResponse } from './dto/instance.response';
import { toInstanceRecord } from './instance.mapper';
import { InstanceService } from './instance.service';
import { openBundle, sealBundle, SessionBundleError } from './session-bundle';
import type { RequestInstance } from '../common/request-instance';

/** The bundle's content: a versioned document around the snapshot, so a later version can read this one. */
const CONTENT_FORMAT = 'wa-gateway/session';
const CONTENT_VERSION = 1;

export const EXPORTED_REASON =
  'exported to another server (POST /instance/export): its credentials left with the bundle, so it cannot connect again; delete it';
const IMPORTED_REASON = 'imported from another server: POST /instance/connect connects it without a QR code';

/**
 * Moving a session between servers (issue #40). Export stops the instance without logging out, seals its
 * credentials and settings under the caller's passphrase and wipes them here in the same transaction:
 * the instance stays as a tombstone (its token still answers status and delete, connect is refused), so
 * the credentials live in one place only — two holders of one linked device log each other out (440).
 * Import (admin) checks and creates it in one transaction, with a new id and token.
 */
@Injectable()
export class SessionMoveService {
  private readonly ssrf: SsrfGuard;

  constructor(
    private readonly moves: SessionMoveRepository,
    private readonly sessions: SessionClient,
    private readonly instances: InstanceService,
    @Inject(BUS) private readonly bus: Bus,
    @Inject(GATEWAY_CONFIG) config: GatewayConfig,
  ) {
    this.ssrf = new SsrfGuard(config.ssrfAllowlist);
  }

  async exportSession(instance: RequestInstance, dto: ExportSessionDto): Promise<SessionExportedResponse> {
    if (instance.exportedAt) throw exportedConflict();
    if (!instance.paired) throw ApiError.conflict('Instance cannot be exported: it has no linked device (connect it with /instance/connect first)');
    // The holder closes the socket WITHOUT logout (the credentials must stay valid) and gives the lease back.
    await this.sessions.requestIfHeld(instance.id, 'release', { instanceId: instance.id });
    const result = await this.moves.exportSession(instance.id, EXPORTED_REASON, (snapshot) =>
      sealBundle({ format: CONTENT_FORMAT, version: CONTENT_VERSION, exportedAt: new Date().toISOString(), session: snapshot }, dto.passphrase),
    );
    switch (result.outcome) {
      case 'sealed':
        // Sends through this gateway stop at once (not at the accept cache's next look).
        asyncAcceptTokens.forget(instance.token);
        return {
          response: 'Session exported',
          bundle: result.sealed,
          instance: toInstanceRecord(result.entity),
          info: 'Keep the bundle and its passphrase safe: they are the WhatsApp session. Import it with POST /instance/import (admin token) on the new server; this instance can no longer connect, delete it when the move is done.',
        };
      case 'not_found':
        throw ApiError.notFound('Instance not found');
      case 'exported':
        throw exportedConflict();
      case 'not_paired':
        throw ApiError.conflict('Instance cannot be exported: it has no linked device (connect it with /instance/connect first)');
      case 'held':
        throw ApiError.conflict('Instance cannot be exported now: a session worker still holds it; try again in a few seconds');
    }
  }

  async importSession(dto: ImportSessionDto): Promise<SessionImportedResponse> {
    let content: unknown;
    try {
      content = await openBundle(dto.bundle, dto.passphrase);
    } catch (error) {
      if (error instanceof SessionBundleError) throw ApiError.badRequest(error.message);
      throw error;
    }
    const snapshot = snapshotOf(content);
    if (dto.name) snapshot.settings.name = dto.name.trim();
    await this.checkDestinations(snapshot);
    const result = await this.moves.importSession({ id: recordId(14), token: newToken(), snapshot, reason: IMPORTED_REASON });
    switch (result.outcome) {
      case 'imported':
        // Its sinks are new here: the relays open their broker connections.
        if (snapshot.webhooks.some((row) => row.kind !== 'webhook')) this.bus.publish(Subjects.sinksChanged, {});
        return {
          response: 'Session imported',
          instance: toInstanceRecord(result.entity),
          token: result.entity.token,
          connected: false,
          loggedIn: false,
          jid: result.entity.jid,
          info: 'POST /instance/connect with this token connects it without a QR code. Delete the exported instance on the old server.',
        };
      case 'duplicate':
        throw ApiError.conflict(`This session is already here: instance ${result.instanceId} holds the same linked device`);
      case 'records_taken':
        throw ApiError.conflict("The bundle's chatbot records already exist on this server (its source instance is here): delete that instance first");
      case 'invalid':
        throw ApiError.badRequest(`Malformed bundle: a value is refused (${result.detail})`);
    }
  }

  /**
   * Every outbound URL the bundle brings passes this server's SSRF guard (its own allowlist), as a URL
   * set through the API would: webhooks, sinks' brokers, Chatwoot, a custom proxy.
   */
  private async checkDestinations(snapshot: SessionSnapshot): Promise<void> {
    const refused = (what: string, error: unknown): never => {
      if (error instanceof SsrfError || error instanceof BrokerUrlError) throw ApiError.badRequest(`The bundle's ${what} is refused here: ${error.message}`);
      throw error;
    };
    for (const row of snapshot.webhooks) {
      const kind = row.kind as SinkKind;
      try {
        if (kind === 'webhook') await this.ssrf.check(String(row.url));
        else await checkBrokerHosts(this.ssrf, parseBrokerUrl(kind, String(row.url)));
      } catch (error) {
        refused(kind === 'webhook' ? 'webhook URL' : `${kind} sink URL`, error);
      }
    }
    if (snapshot.chatwoot) await this.ssrf.check(String(snapshot.chatwoot.url)).catch((error: unknown) => refused('Chatwoot URL', error));
    const proxy = snapshot.settings.proxy;
    if (proxy?.mode === 'custom' && proxy.proxyUrl) this.instances.checkProxyUrl(proxy.proxyUrl, "proxy's proxy_url");
  }
}

function exportedConflict(): ApiError {
  return ApiError.conflict('Instance was exported to another server: its credentials left with the bundle (delete this instance)');
}

/** The snapshot of an opened bundle, its shape checked: anything else is a malformed bundle (400), never a 500. */
export function snapshotOf(content: unknown): SessionSnapshot {
  const doc = content as { format?: unknown; version?: unknown; session?: unknown } | null;
  if (!isObject(doc) || doc.format !== CONTENT_FORMAT) throw malformed('not a session bundle');
  if (doc.version !== CONTENT_VERSION) throw malformed(`version ${String(doc.version)} is not one this server reads`);
  const session = doc.session as Partial<SessionSnapshot>;
  if (!isObject(session)) throw malformed('no session');
  const { device, settings, auth } = session;
  if (!isObject(device) || !isObject(settings) || !isObject(auth)) throw malformed('device, settings or credentials missing');
  const deviceStrings = ['jid', 'lid', 'owner', 'profileName', 'platform', 'browser'] as const;
  if (deviceStrings.some((key) => typeof device[key] !== 'string') || typeof device.isBusiness !== 'boolean') throw malformed('device');
  if (!/^[^:@\s]+(:\d+)?@[\w.]+$/.test(device.jid)) throw malformed('device jid');
  const settingStrings = ['name', 'systemName', 'adminField01', 'adminField02', 'openaiApikey', 'chatbotStopConversation', 'currentPresence'] as const;
  const settingNumbers = ['chatbotStopMinutes', 'chatbotStopWhenYouSendMsg', 'msgDelayMin', 'msgDelayMax', 'historyDays'] as const;
  const settingFlags = ['chatbotEnabled', 'chatbotIgnoreGroups', 'historyFullSync'] as const;
  for (const key of settingStrings) if (typeof settings[key] !== 'string') throw malformed(`settings.${key}`);
  for (const key of settingNumbers)
    if (!Number.isInteger(settings[key]) || settings[key] < 0 || settings[key] > 2 ** 31 - 1) throw malformed(`settings.${key}`);
  for (const key of settingFlags) if (typeof settings[key] !== 'boolean') throw malformed(`settings.${key}`);
  if (!isObject(settings.fieldsMap) || Object.values(settings.fieldsMap).some((value) => typeof value !== 'string')) throw malformed('settings.fieldsMap');
  if (settings.name.trim() === '' || settings.name.length > 100) throw malformed('settings.name');
  const proxy = settings.proxy;
  if (proxy !== null && (!isObject(proxy) || !['internal', 'custom', 'none'].includes(proxy.mode as string))) throw malformed('settings.proxy');
  if (proxy && (!nullableString(proxy.proxyUrl) || !nullableString(proxy.proxyFallback))) throw malformed('settings.proxy');
  if (typeof auth.creds !== 'string' || !Array.isArray(auth.keys)) throw malformed('credentials');
  if (auth.keys.some((key) => !isObject(key) || typeof key.type !== 'string' || typeof key.id !== 'string' || typeof key.value !== 'string'))
    throw malformed('credentials');
  const rows = (value: unknown, what: string): Array<Record<string, unknown>> => {
    if (!Array.isArray(value) || value.some((row) => !isObject(row))) throw malformed(what);
    return value as Array<Record<string, unknown>>;
  };
  const webhooks = rows(session.webhooks, 'webhooks');
  if (webhooks.some((row) => typeof row.url !== 'string' || !(SINK_KINDS as readonly unknown[]).includes(row.kind) || typeof row.secret !== 'string'))
    throw malformed('webhooks');
  const chatwoot = session.chatwoot ?? null;
  if (chatwoot !== null && (!isObject(chatwoot) || typeof chatwoot.url !== 'string')) throw malformed('chatwoot');
  return {
    device,
    settings: { ...settings, proxy: proxy ? { ...proxy } : null },
    auth: { creds: auth.creds, keys: auth.keys },
    webhooks,
    chatwoot,
    chatbotRecords: rows(session.chatbotRecords, 'chatbotRecords'),
    knowledgeChunks: rows(session.knowledgeChunks, 'knowledgeChunks'),
  } as SessionSnapshot;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const nullableString = (value: unknown) => value === null || value === undefined || typeof value === 'string';

const malformed = (what: string) => ApiError.badRequest(`Malformed bundle: ${what}`);
