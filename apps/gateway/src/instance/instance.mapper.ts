import type { InstanceRecord } from '@gw/contracts';
import type { InstanceRow, ProxySettings } from '@gw/persistence';
import type { ProxyResponse } from './dto/instance.response';

/** Shows that a secret is set without showing it: first 3 characters, then asterisks. */
export function maskSecret(secret: string): string {
  if (!secret) return '';
  return `${secret.slice(0, 3)}${'*'.repeat(Math.max(4, Math.min(secret.length - 3, 20)))}`;
}

/** `scheme://***:***@host:port`: credentials of a proxy URL never leave the service. */
export function maskProxyUrl(url: string | null | undefined): string {
  if (!url) return '';
  try {
    const parsed = new URL(url);
    if (parsed.username || parsed.password) {
      parsed.username = '***';
      parsed.password = '***';
    }
    return parsed.toString().replace(/\/$/, '');
  } catch {
    return '***';
  }
}

function iso(date: Date | null): string {
  return date ? date.toISOString() : '';
}

/** The API's Instance record; secrets masked. */
export function toInstanceRecord(entity: InstanceRow): InstanceRecord {
  return {
    id: entity.id,
    token: entity.token,
    status: entity.status,
    paircode: entity.paircode,
    qrcode: entity.qrcode,
    name: entity.name,
    profileName: entity.profileName,
    profilePicUrl: entity.profilePicUrl,
    isBusiness: entity.isBusiness,
    plataform: entity.platform,
    systemName: entity.systemName,
    owner: entity.owner,
    lastDisconnect: iso(entity.lastDisconnect),
    lastDisconnectReason: entity.lastDisconnectReason,
    adminField01: entity.adminField01,
    adminField02: entity.adminField02,
    openai_apikey: maskSecret(entity.openaiApikey),
    chatbot_enabled: entity.chatbotEnabled,
    chatbot_ignoreGroups: entity.chatbotIgnoreGroups,
    chatbot_stopConversation: entity.chatbotStopConversation,
    chatbot_stopMinutes: entity.chatbotStopMinutes,
    chatbot_stopWhenYouSendMsg: entity.chatbotStopWhenYouSendMsg,
    fieldsMap: entity.fieldsMap ?? {},
    msg_delay_min: entity.msgDelayMin,
    msg_delay_max: entity.msgDelayMax,
    currentPresence: entity.currentPresence,
    currentTime: new Date().toISOString(),
    created: iso(entity.created),
    updated: iso(entity.updated),
  };
}

/** GET /instance/proxy shape. */
export function toProxyView(proxy: Readonly<ProxySettings> | null): ProxyResponse {
  const settings = proxy ?? { mode: 'internal' as const, proxyUrl: null, proxyFallback: null, managed: null, lastTestAt: null, lastTestError: null };
  return {
    mode: settings.mode,
    // What the socket really uses: `internal` only through a managed proxy of the operator's pools (there is no other internal route).
    effective_mode: settings.mode === 'custom' ? 'custom' : settings.mode === 'internal' && settings.managed?.proxyUrl ? 'internal' : 'direct',
    ...(settings.mode === 'internal' && settings.managed?.proxyUrl ? { effective_detail: 'managed_pool' } : {}),
    fallback: { active: false, reason: '', since: 0 },
    proxy_url: maskProxyUrl(settings.proxyUrl),
    proxy_fallback:
      settings.mode === 'custom'
        ? settings.proxyFallback && /:\/\//.test(settings.proxyFallback)
          ? maskProxyUrl(settings.proxyFallback)
          : settings.proxyFallback === 'never'
            ? 'never'
            : 'internal'
        : '',
    managed: settings.managed !== null,
    // The place only: the pool's proxy URL (with its credentials) never leaves the service.
    ...(settings.managed ? { managed_location: { country: settings.managed.country, state: settings.managed.state, city: settings.managed.city } } : {}),
    last_test_at: settings.lastTestAt ? Date.parse(settings.lastTestAt) : 0,
    last_test_error: settings.lastTestError ?? '',
    validation_error: Boolean(settings.lastTestError),
  };
}
