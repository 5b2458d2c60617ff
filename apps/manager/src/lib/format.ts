import type { Instance, MonitorEvent } from './types';

/** The event types of the API (webhooks and /sse), in the reference's order. */
export { EVENT_TYPES } from '@gw/contracts';

export const EXCLUDE_MESSAGES = ['wasSentByApi', 'wasNotSentByApi', 'fromMeYes', 'fromMeNo', 'isGroupYes', 'isGroupNo'] as const;

/** A secret shown without showing it: its first and last 4 characters around dots. */
export function maskToken(token: string): string {
  if (!token) return '';
  if (token.length <= 10) return '•'.repeat(token.length);
  return `${token.slice(0, 4)}${'•'.repeat(Math.min(token.length - 8, 24))}${token.slice(-4)}`;
}

/** The status filter's choices, in the sidebar's order; `hibernated` (uazapi 2.1.1) is a state of its own. */
export const STATUS_FILTERS = ['all', 'connected', 'connecting', 'hibernated', 'disconnected'] as const;
export type StatusFilter = (typeof STATUS_FILTERS)[number];

/**
 * What the connection card offers to switch the session: hibernate a connected instance (`POST
 * /instance/hibernate`: the socket closes, the credentials stay), wake a hibernated one (`POST
 * /instance/connect`, no QR code); nothing for the other states.
 */
export function hibernationToggle(status: string): { label: 'Hibernate' | 'Wake'; path: '/instance/hibernate' | '/instance/connect' } | undefined {
  if (status === 'connected') return { label: 'Hibernate', path: '/instance/hibernate' };
  if (status === 'hibernated') return { label: 'Wake', path: '/instance/connect' };
  return undefined;
}

/** The proxy fallback a custom proxy is saved with unless another is typed: uazapi 2.1.1's `internal` (2.1.0 called it `internal_proxy`). */
export const DEFAULT_PROXY_FALLBACK = 'internal';

/** Instances whose name, id, owner or profile name contain `search` (any case), with the status asked for. */
export function filterInstances(instances: Instance[], search: string, status: StatusFilter): Instance[] {
  const needle = search.trim().toLowerCase();
  return instances.filter((instance) => {
    if (status !== 'all' && instance.status !== status) return false;
    if (!needle) return true;
    return [instance.name, instance.id, instance.owner, instance.profileName, instance.adminField01, instance.adminField02].some((value) =>
      (value ?? '').toLowerCase().includes(needle),
    );
  });
}

/** Counts per status, for the filter's badges. */
export function countByStatus(instances: Instance[]): Record<StatusFilter, number> {
  const counts = Object.fromEntries(STATUS_FILTERS.map((status) => [status, 0])) as Record<StatusFilter, number>;
  counts.all = instances.length;
  for (const instance of instances) if (instance.status in counts) counts[instance.status] += 1;
  return counts;
}

/** "3 min ago", "2 h ago", or the date; '' for no date. */
export function relativeTime(iso: string | number | undefined, now = Date.now()): string {
  if (iso === undefined || iso === '' || iso === 0) return '';
  const at = typeof iso === 'number' ? iso : Date.parse(iso);
  if (!Number.isFinite(at)) return '';
  const seconds = Math.round((now - at) / 1000);
  if (seconds < 0) return new Date(at).toLocaleString();
  if (seconds < 45) return 'just now';
  if (seconds < 3600) return `${Math.round(seconds / 60)} min ago`;
  if (seconds < 86_400) return `${Math.round(seconds / 3600)} h ago`;
  if (seconds < 7 * 86_400) return `${Math.round(seconds / 86_400)} d ago`;
  return new Date(at).toLocaleDateString();
}

/** Merges a `connection` event into the instance it is about (status, QR, pairing code, last disconnect). */
export function applyConnectionEvent(instance: Instance, data: Record<string, unknown>): Instance {
  const about = (data.instance ?? {}) as Partial<Instance>;
  const next: Instance = { ...instance };
  if (typeof about.status === 'string') next.status = about.status;
  if (next.status === 'connecting') {
    if (typeof about.qrcode === 'string') next.qrcode = about.qrcode;
    if (typeof about.paircode === 'string') next.paircode = about.paircode;
  } else {
    next.qrcode = '';
    next.paircode = '';
  }
  if (typeof about.lastDisconnect === 'string') next.lastDisconnect = about.lastDisconnect;
  if (typeof about.lastDisconnectReason === 'string') next.lastDisconnectReason = about.lastDisconnectReason;
  if (typeof about.owner === 'string' && about.owner) next.owner = about.owner;
  if (typeof about.profileName === 'string' && about.profileName) next.profileName = about.profileName;
  return next;
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** One line saying what an event is about, for the monitor's list. */
export function summarizeEvent(event: Pick<MonitorEvent, 'type' | 'data'>): string {
  const data = event.data;
  switch (event.type) {
    case 'connection': {
      const about = (data.instance ?? {}) as Record<string, unknown>;
      const reason = text(about.lastDisconnectReason);
      const extra = about.qrcode
        ? ' (new QR code)'
        : about.paircode
          ? ` (pairing code ${text(about.paircode)})`
          : reason && about.status === 'disconnected'
            ? ` (${reason})`
            : '';
      return `${text(about.status) || 'changed'}${extra}`;
    }
    case 'messages': {
      const message = (data.message ?? {}) as Record<string, unknown>;
      const who = message.fromMe ? `→ ${text(message.chatid).split('@')[0]}` : `← ${text(message.senderName) || text(message.sender).split('@')[0]}`;
      const body = text(message.text) || text(message.messageType) || text(message.type);
      return `${who}: ${body}`.slice(0, 200);
    }
    case 'messages_update': {
      const state = text(data.state) || text(data.type) || text((data.event as Record<string, unknown> | undefined)?.Type);
      return state || 'message update';
    }
    case 'presence': {
      const presence = (data.event ?? data) as Record<string, unknown>;
      return (
        `${text(presence.Chat ?? presence.From ?? presence.chat).split('@')[0]} ${text(presence.State ?? presence.presence ?? presence.type)}`.trim() ||
        'presence'
      );
    }
    default: {
      const type = text(data.type);
      return type || event.type;
    }
  }
}

/** Keeps the newest `limit` events (newest first). */
export function pushEvent(events: MonitorEvent[], event: MonitorEvent, limit = 300): MonitorEvent[] {
  if (events.some((seen) => seen.id === event.id && seen.type === event.type)) return events;
  const next = [event, ...events];
  return next.length > limit ? next.slice(0, limit) : next;
}

/** "5511999999999" → "+55 11 99999-9999" when it looks Brazilian, else "+<digits>". */
export function formatPhone(owner: string): string {
  const digits = (owner ?? '').split('@')[0].split(':')[0].replace(/\D/g, '');
  if (!digits) return '';
  const br = /^55(\d{2})(\d{4,5})(\d{4})$/.exec(digits);
  if (br) return `+55 ${br[1]} ${br[2]}-${br[3]}`;
  return `+${digits}`;
}

/** Lines of "label|id" or "label" → the API's choices strings (trimmed, empty lines dropped). */
export function choiceLines(text: string): string[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
}
