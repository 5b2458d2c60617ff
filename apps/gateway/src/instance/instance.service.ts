import { Inject, Injectable } from '@nestjs/common';
import type { Bus } from '@gw/bus';
import { CHATBOT_CONSUMER } from '@gw/chatbot';
import { type JidObject, privacySettingsOf, Subjects } from '@gw/contracts';
import { AuthStateRepository, InstanceRepository, type InstanceRow, type InstancePatch, type ProxySettings } from '@gw/persistence';
import { newRequestId, newToken, recordId, SsrfGuard } from '@gw/platform';
import { isIP } from 'node:net';
import { ApiError } from '../common/api-error';
import { SessionClient } from '../session/session.client';
import { AsyncQueueService } from '../message/async/async-queue.service';
import { ProxyManagedService } from '../proxy-managed/proxy-managed.service';
import { asyncAcceptTokens } from '../common/accept-token-cache';
import type { RequestInstance } from '../common/request-instance';
import type { GatewayConfig } from '../runtime/gateway-config';
import { BUS, GATEWAY_CONFIG } from '../runtime/tokens';
import type { ConnectDto, ChatbotSettingsDto, PrivacyDto, ProxyDto } from './dto/instance.dto';
import { FIELD_NAMES } from './dto/instance.dto';
import { toInstanceRecord, toProxyView } from './instance.mapper';
import type {
  InstanceConnectionResponse,
  InstanceCreatedResponse,
  InstanceDisconnectedResponse,
  InstanceStatusResponse,
  PrivacyResponse,
  ProxyChangedResponse,
  ProxyResponse,
} from './dto/instance.response';
import type { InstanceResponse, InstanceWrappedResponse } from '../common/dto/instance.response';
import type { ReplyResponse, ReplyWithInfoResponse } from '../common/dto/reply.response';
import { historyRequest, normaliseDelays } from './instance.rules';

const PROXY_PROTOCOLS = ['http:', 'https:', 'socks5:', 'socks5h:'];

export const HIBERNATED_INFO =
  'The session is paused: its socket is closed and no session worker holds it; the credentials are kept. POST /instance/connect wakes it without a QR code.';

@Injectable()
export class InstanceService {
  private readonly ssrf: SsrfGuard;

  constructor(
    private readonly instances: InstanceRepository,
    private readonly authState: AuthStateRepository,
    private readonly sessions: SessionClient,
    private readonly queue: AsyncQueueService,
    private readonly managedProxies: ProxyManagedService,
    @Inject(BUS) private readonly bus: Bus,
    @Inject(GATEWAY_CONFIG) config: GatewayConfig,
  ) {
    this.ssrf = new SsrfGuard(config.ssrfAllowlist);
  }

  // --- admin -------------------------------------------------------------------------------------

  async create(values: { name: string; adminField01?: string; adminField02?: string; systemName?: string }): Promise<InstanceCreatedResponse> {
    const entity = await this.instances.create({
      id: recordId(14),
      token: newToken(),
      name: values.name.trim(),
      adminField01: values.adminField01 ?? '',
      adminField02: values.adminField02 ?? '',
      systemName: values.systemName ?? '',
    });
    return {
      response: 'Instance created successfully',
      instance: toInstanceRecord(entity),
      connected: false,
      loggedIn: false,
      name: entity.name,
      token: entity.token,
      info: 'The instance starts disconnected: call POST /instance/connect with its token to link a WhatsApp account.',
    };
  }

  async listAll(): Promise<InstanceResponse[]> {
    return (await this.instances.list()).map(toInstanceRecord);
  }

  async updateAdminFields(id: string, fields: { adminField01?: string; adminField02?: string }): Promise<InstanceResponse> {
    const patch: InstancePatch = {};
    if (fields.adminField01 !== undefined) patch.adminField01 = fields.adminField01;
    if (fields.adminField02 !== undefined) patch.adminField02 = fields.adminField02;
    const entity = await this.instances.update(id, patch);
    if (!entity) throw ApiError.notFound('Instance not found');
    return toInstanceRecord(entity);
  }

  // --- lifecycle ---------------------------------------------------------------------------------

  async connect(instance: RequestInstance, dto: ConnectDto, requestIdHeader?: string): Promise<InstanceConnectionResponse> {
    // Its session moved to another server (issue #40): connecting here would pair anew, or (were the credentials still here) log the other out.
    if (instance.exportedAt)
      throw ApiError.conflict(
        'Instance was exported to another server: its credentials left with the bundle, so it cannot connect here (delete this instance)',
      );
    const requestId = requestIdHeader && /^[\w.:-]{1,100}$/.test(requestIdHeader) ? requestIdHeader : newRequestId();
    // A place of the operator's pools: a working proxy of it, kept for the instance (400 naming the field for an unknown place).
    const managed = await this.managedProxies.assign(instance, dto);
    const moved = managed ? await this.instances.update(instance.id, { proxy: managed }) : null;
    // Already connected through another proxy: it reconnects through the new place's at once.
    if (moved) await this.applyProxy(instance, moved);
    const reply = await this.sessions.connect({
      instanceId: instance.id,
      phone: dto.phone,
      browser: dto.browser ?? 'auto',
      systemName: dto.systemName,
      history: historyRequest(dto.history_days),
      requestId,
    });
    const entity = await this.mustFind(instance.id);
    // A hibernated instance woke: sends through this gateway stop reading the accept cache's copy.
    if (instance.status === 'hibernated') asyncAcceptTokens.forget(instance.token);
    return {
      connected: reply.status === 'connected',
      loggedIn: reply.loggedIn,
      jid: reply.jid,
      instance: toInstanceRecord(entity),
      ...(reply.requestId ? { request_id: reply.requestId } : {}),
      // No QR code, pairing code or connection: why (e.g. WhatsApp out of reach), instead of an empty QR.
      ...(reply.reason ? { reason: reply.reason } : {}),
    };
  }

  async status(instance: RequestInstance): Promise<InstanceStatusResponse> {
    const entity = await this.mustFind(instance.id);
    const connected = entity.status === 'connected';
    return {
      instance: toInstanceRecord(entity),
      status: { connected, loggedIn: connected && entity.paired, jid: connected ? parseJid(entity.jid) : null },
      ...(statusReason(entity) ? { reason: statusReason(entity) } : {}),
    };
  }

  async disconnect(instance: RequestInstance): Promise<InstanceDisconnectedResponse> {
    const reply = await this.sessions.requestIfHeld(instance.id, 'logout', { instanceId: instance.id });
    if (!reply) await this.forgetDevice(instance.id, 'logged out through the API');
    const entity = await this.mustFind(instance.id);
    return {
      instance: toInstanceRecord(entity),
      response: 'Disconnected',
      info: 'The device has been disconnected from WhatsApp. A new QR code will be required for the next connection.',
    };
  }

  /**
   * Hibernation (uazapi 2.1.1): the holder closes the socket without logout and gives the lease back, the
   * instance `hibernated` (no worker adopts it; its memory is released); nobody holding it, the state is
   * written here. The credentials stay: `/instance/connect` wakes it without a QR. 409 without a linked device.
   */
  async hibernate(instance: RequestInstance): Promise<InstanceDisconnectedResponse> {
    const current = await this.mustFind(instance.id);
    if (current.status !== 'hibernated') {
      if (!current.paired) throw ApiError.conflict('Instance cannot hibernate: it has no linked device (connect it with /instance/connect)');
      const reply = await this.sessions.requestIfHeld(instance.id, 'hibernate', { instanceId: instance.id });
      if (!reply)
        await this.instances.update(instance.id, {
          status: 'hibernated',
          desiredState: 'disconnected',
          qrcode: '',
          paircode: '',
          pairingExpiresAt: null,
          lastDisconnect: new Date(),
          lastDisconnectReason: 'hibernated by request',
        });
      // Sends through this gateway see the new state at once (not the accept cache's copy).
      asyncAcceptTokens.forget(instance.token);
    }
    return { instance: toInstanceRecord(await this.mustFind(instance.id)), response: 'Instance hibernated', info: HIBERNATED_INFO };
  }

  async remove(instance: RequestInstance): Promise<ReplyWithInfoResponse> {
    // Log the device out first, so the account does not keep a dead linked device.
    await this.sessions.requestIfHeld(instance.id, 'logout', { instanceId: instance.id }).catch(() => null);
    await this.instances.delete(instance.id);
    // This gateway stops taking sends with the token at once (others within the cache's ten seconds).
    asyncAcceptTokens.forget(instance.token);
    // Its event sinks went with it: the relays close their broker connections.
    this.bus.publish(Subjects.sinksChanged, {});
    return { response: 'Instance Deleted', info: 'The device was disconnected and the instance removed from the database.' };
  }

  // --- settings ----------------------------------------------------------------------------------

  async rename(instance: RequestInstance, name: string): Promise<InstanceResponse> {
    return toInstanceRecord(await this.patch(instance.id, { name: name.trim() }));
  }

  async updateDelaySettings(instance: RequestInstance, min: number, max: number): Promise<InstanceWrappedResponse> {
    const delays = normaliseDelays(min, max);
    const entity = await this.instances.update(instance.id, { msgDelayMin: delays.min, msgDelayMax: delays.max }).catch(() => {
      throw new ApiError('internal', 'failed to update delay settings');
    });
    if (!entity) throw ApiError.notFound('client not found');
    // What is still queued follows the new gap at once.
    this.queue.settingsChanged(instance.id);
    return { instance: toInstanceRecord(entity) };
  }

  async updateFieldsMap(instance: RequestInstance, body: Record<string, string | null | undefined>): Promise<InstanceResponse> {
    const fieldsMap = { ...(instance.fieldsMap ?? {}) };
    for (const field of FIELD_NAMES) {
      const value = body[field];
      if (value === undefined) continue;
      // null, like an empty name, takes the field's name away.
      if (value === null || value.trim() === '') delete fieldsMap[field];
      else fieldsMap[field] = value.trim();
    }
    return toInstanceRecord(await this.patch(instance.id, { fieldsMap }));
  }

  async updateChatbotSettings(instance: RequestInstance, dto: ChatbotSettingsDto): Promise<InstanceResponse> {
    const patch: InstancePatch = {};
    // A null key or keyword clears it, as an empty one does.
    if (dto.openai_apikey !== undefined) patch.openaiApikey = dto.openai_apikey ?? '';
    if (dto.chatbot_enabled !== undefined) patch.chatbotEnabled = dto.chatbot_enabled;
    if (dto.chatbot_ignoreGroups !== undefined) patch.chatbotIgnoreGroups = dto.chatbot_ignoreGroups;
    if (dto.chatbot_stopConversation !== undefined) patch.chatbotStopConversation = dto.chatbot_stopConversation ?? '';
    if (dto.chatbot_stopMinutes !== undefined) patch.chatbotStopMinutes = Math.max(0, dto.chatbot_stopMinutes);
    if (dto.chatbot_stopWhenYouSendMsg !== undefined) patch.chatbotStopWhenYouSendMsg = Math.max(0, dto.chatbot_stopWhenYouSendMsg);
    // Turned on, its follower's cursor starts in the same transaction (not at the follower's next refresh, after the first messages).
    const entity = await this.instances.updateChatbotSettings(instance.id, patch, CHATBOT_CONSUMER);
    if (!entity) throw ApiError.notFound('Instance not found');
    return toInstanceRecord(entity);
  }

  async setPresence(instance: RequestInstance, presence: 'available' | 'unavailable'): Promise<ReplyResponse> {
    await this.sessions.request(instance.id, 'presence', { instanceId: instance.id, presence });
    await this.instances.update(instance.id, { currentPresence: presence });
    return { response: 'Presence updated successfully' };
  }

  /** The worker answers WhatsApp's privacy settings under these names (its `privacy.get` / `privacy.set`). */
  async getPrivacy(instance: RequestInstance): Promise<PrivacyResponse> {
    return this.sessions.request(instance.id, 'privacy.get', { instanceId: instance.id });
  }

  async setPrivacy(instance: RequestInstance, dto: PrivacyDto): Promise<PrivacyResponse> {
    const settings = privacySettingsOf(dto);
    if (Object.keys(settings).length === 0) throw ApiError.badRequest('Invalid payload: give at least one privacy setting');
    return this.sessions.request(instance.id, 'privacy.set', { instanceId: instance.id, settings });
  }

  getProxy(instance: RequestInstance): ProxyResponse {
    return toProxyView(instance.proxy);
  }

  async setProxy(instance: RequestInstance, dto: ProxyDto): Promise<ProxyChangedResponse> {
    // The DTO requires `mode` unless the older `enable` is given.
    const mode = dto.mode ?? (dto.enable ? 'custom' : 'internal');
    const rotate = dto.rotate_now === true;
    if (rotate && mode !== 'internal') throw ApiError.badRequest('rotate_now is only for mode internal');
    const proxy: ProxySettings = { ...(instance.proxy ?? emptyProxy()), mode, lastTestAt: null, lastTestError: null };
    if (mode === 'custom') {
      if (!dto.proxy_url) throw ApiError.badRequest('proxy_url is required when mode is custom');
      proxy.proxyUrl = this.checkProxyUrl(dto.proxy_url, 'proxy_url');
      // `internal` (uazapi 2.1.1) and its 2.1.0 name `internal_proxy` are one policy, kept under the new name.
      const fallback = dto.proxy_fallback === 'internal_proxy' ? 'internal' : (dto.proxy_fallback ?? 'internal');
      proxy.proxyFallback = fallback === 'internal' || fallback === 'never' ? fallback : this.checkProxyUrl(fallback, 'proxy_fallback');
    } else {
      if (mode === 'none' && dto.confirm_no_proxy !== true) throw ApiError.badRequest('confirm_no_proxy must be true when mode is none');
      proxy.proxyUrl = null;
      proxy.proxyFallback = null;
      // Internal: a working proxy of the operator's managed pools (when there are any), kept for the instance.
      // rotate_now: another one of the pools than the instance's, at once.
      if (mode === 'internal')
        proxy.managed = rotate
          ? (await this.managedProxies.rotateInternal(instance)).managed
          : ((await this.managedProxies.assignInternal(instance))?.managed ?? proxy.managed);
    }
    const entity = await this.patch(instance.id, { proxy });
    return {
      details: 'Proxy configurado',
      proxy: toProxyView(entity.proxy),
      restart_requested: await this.applyProxy(instance, entity),
      ...(rotate ? { rotated: true } : {}),
    };
  }

  async deleteProxy(instance: RequestInstance): Promise<ProxyChangedResponse> {
    const entity = await this.patch(instance.id, { proxy: null });
    return { details: 'Proxy removido', proxy: toProxyView(entity.proxy), restart_requested: await this.applyProxy(instance, entity) };
  }

  // --- helpers -----------------------------------------------------------------------------------

  /**
   * A proxy URL's form, and its host when it is an address: a private or reserved one is refused here
   * like any URL a tenant gives (unless SSRF_ALLOWLIST lets it through). A name is judged by the worker
   * each time it connects (the answer may change), with one error whatever the cause.
   */
  checkProxyUrl(value: string, field: string): string {
    let parsed: URL;
    try {
      parsed = new URL(value);
    } catch {
      throw ApiError.badRequest(`${field} must be a URL such as http://user:pass@host:port`);
    }
    if (!PROXY_PROTOCOLS.includes(parsed.protocol)) throw ApiError.badRequest(`${field} must use http, https, socks5 or socks5h`);
    if (!parsed.hostname || !parsed.port) throw ApiError.badRequest(`${field} must include a host and a port`);
    // socks5:// hosts are left as written by the URL parser; read as http's they are normalised (0x7f000001 → 127.0.0.1).
    const host = new URL(`http://${parsed.host}`).hostname.replace(/^\[|\]$/g, '');
    if (isIP(host) && !this.ssrf.isAddressAllowed(host))
      throw ApiError.badRequest(`${field} points to a private or reserved address; to allow it, add its range to SSRF_ALLOWLIST`);
    return value;
  }

  /**
   * A connected session whose transport changed reconnects at once through the new one (the
   * reset's reconnect: same credentials, no new QR); answers whether it was asked to.
   */
  private async applyProxy(before: RequestInstance, after: { readonly proxy: ProxySettings | null }): Promise<boolean> {
    if (effectiveProxyUrl(before.proxy) === effectiveProxyUrl(after.proxy) || before.status !== 'connected') return false;
    const reply = await this.sessions.requestIfHeld(before.id, 'instance.reset', { instanceId: before.id, force: true }).catch(() => null);
    return reply?.outcome === 'started';
  }

  /** Logout with nobody holding the session: forget the credentials here. */
  private async forgetDevice(instanceId: string, reason: string) {
    await this.authState.clear(instanceId);
    await this.instances.update(instanceId, {
      status: 'disconnected',
      desiredState: 'disconnected',
      paired: false,
      qrcode: '',
      paircode: '',
      pairingExpiresAt: null,
      lastDisconnect: new Date(),
      lastDisconnectReason: reason,
    });
  }

  private async patch(id: string, patch: InstancePatch): Promise<InstanceRow> {
    const entity = await this.instances.update(id, patch);
    if (!entity) throw ApiError.notFound('Instance not found');
    return entity;
  }

  private async mustFind(id: string): Promise<InstanceRow> {
    const entity = await this.instances.findById(id);
    if (!entity) throw ApiError.notFound('Instance not found');
    return entity;
  }
}

/** The URL the worker's socket goes through for these settings (null: direct), as network-options reads them. */
function effectiveProxyUrl(proxy: ProxySettings | null): string | null {
  if (proxy?.mode === 'custom') return proxy.proxyUrl;
  if (proxy?.mode === 'internal') return proxy.managed?.proxyUrl ?? null;
  return null;
}

function emptyProxy(): ProxySettings {
  return { mode: 'internal', proxyUrl: null, proxyFallback: null, managed: null, lastTestAt: null, lastTestError: null };
}

/** `5511…:3@s.whatsapp.net` → the status endpoint's JID object. */
export function parseJid(jid: string): JidObject | null {
  const match = /^([^:@]+)(?::(\d+))?@(.+)$/.exec(jid);
  if (!match) return null;
  return { user: match[1], agent: 0, device: match[2] ? Number(match[2]) : 0, server: match[3] };
}

/** Why an instance is not connected and shows no code to scan or type: its last disconnect's reason. */
function statusReason(entity: InstanceRow): string | undefined {
  const waiting = entity.status === 'disconnected' || (entity.status === 'connecting' && !entity.qrcode && !entity.paircode);
  return waiting && entity.lastDisconnectReason ? entity.lastDisconnectReason : undefined;
}
