// Fault injection. Immediate faults (drop, stream errors, logout, restart) are executed by the
// simulator; the rules kept here are consulted at the matching points of the protocol flow.
import type { FaultLookup } from './context';
import { SimError } from './errors';
import { UNDECRYPTABLE_MODES, type OmitPnFaultRule, type UndecryptableFaultRule, type UndecryptableMode } from './undecryptable';
import { parseSendLimitFault, type NewChatCapFault, type ReachoutTimelockFault } from './send-limits';

/**
 * - drop: the message is routed, its ack never comes
 * - delay: the ack comes `delayMs` late
 * - error: an error ack (`error` code) instead, nothing routed
 * - lost: the connection is cut (no close frame) with the stanza in flight: neither routed nor acked,
 *   as when a TCP connection dies before the server read what the client wrote
 */
export type AckFaultMode = 'drop' | 'delay' | 'error' | 'lost';

export interface AckFaultRule {
  kind: 'ack';
  mode: AckFaultMode;
  /** Error code for mode=error, e.g. "463" (missing tctoken) or "479" (smax invalid). */
  error?: string;
  delayMs?: number;
  /** Restrict to messages sent by this device JID (or any device of this phone/user JID). */
  device?: string;
  /** How many messages the rule applies to; omitted means until cleared. */
  count?: number;
}

export interface LatencyFaultRule {
  kind: 'latency';
  delayMs: number;
  device?: string;
}

/** The server hello comes `delayMs` late for every new connection (a congested path or server). */
export interface SlowHandshakeRule {
  kind: 'slow-handshake';
  delayMs: number;
}

export interface IgnorePingsRule {
  kind: 'ignore-pings';
  device?: string;
}

export interface CorruptFaultRule {
  kind: 'corrupt';
  /** Recipient device JID; its next `count` encrypted deliveries are garbled (forces retry receipts). */
  device?: string;
  count?: number;
}

export interface DropDeliveryRule {
  kind: 'drop-deliveries';
  device?: string;
  count?: number;
}

export interface RejectLoginRule {
  kind: 'reject-login';
  /** `<failure reason>` sent on login, e.g. 401 (logged out), 403 (banned), 503. */
  reason?: number;
  device?: string;
  count?: number;
}

export interface AppStateFaultRule {
  kind: 'app-state';
  /** `<error code>` the device's next app-state patch upload is answered with, e.g. 400, 409, 500. */
  code?: number;
  device?: string;
  count?: number;
}

/**
 * Standing: app state is served as WhatsApp serves a real account's, in blobs on the media server:
 * a collection fetched with return_snapshot=true (a fresh device's first sync, a forced resync) comes
 * as a `<snapshot>` ExternalBlobReference to an encrypted SyncdSnapshot, and a patch whose mutations
 * encode to more than `externalAbove` bytes (default 0: every one) has them as `externalMutations`, a
 * blob too. The shapes are those whatsmeow's appstate.ParsePatchList and Baileys' extractSyncdPatches /
 * decodePatches read (both download them as md-app-state media by direct path).
 */
export interface AppStateExternalRule {
  kind: 'app-state-external';
  snapshot: boolean;
  externalAbove: number | null;
  device?: string;
}

/**
 * The phone changes app state (`mod` on `jid`, as POST /sim/accounts/{phone}/app-state) while the
 * device's next upload to the same collection is in flight: the phone's patch is stored first, so the
 * upload's base version is stale and the server answers it with a 409 and the patch it missed — the
 * race behind whatsmeow issues #382 and #686 (`<collection type="error"><error code="409"
 * text="conflict"/><patches>…`). `device` filters on the uploading device.
 */
export interface AppStateConflictRule {
  kind: 'app-state-conflict';
  jid: string;
  mod: Record<string, unknown>;
  device?: string;
  count?: number;
}

/**
 * The server hands a device a patch (or a snapshot) whose MAC does not match its content: in the next
 * `count` answers that carry `collection` (any, if omitted) to the device, the newest mutation's value is
 * replaced by `value` (a SyncActionValue, e.g. `{"labelEditAction": {"name": "Forged"}}`; default: the same
 * value encrypted again) under the account's key, while its value MAC, the patch MAC and the snapshot MAC
 * stay the genuine ones — a patch corrupted or forged between its author and the device. A client that
 * checks MACs refuses it (whatsmeow appstate ErrMismatchingContentMAC, then ErrMismatchingLTHash; rc14
 * skips the record and warns "LTHash verification failed") and fetches the collection again; one that
 * does not applies the forged value. What is stored is not touched: the next answer is genuine.
 */
export interface AppStateBadMacRule {
  kind: 'app-state-bad-mac';
  collection?: string;
  value?: Record<string, unknown>;
  device?: string;
  count?: number;
}

/**
 * The phone's next `count` QR scans find the companion's registration refreshed: the server sends the
 * companion `<notification type="companion_reg_refresh"><companion_reg_refresh/></notification>` and
 * retires the ADV secret the scanned QR carried, so that scan and any later one of a QR with that
 * secret fail ("Couldn't link device"); a QR re-rendered with a new secret links. As reported since
 * 2026-07-28 (Baileys issue #2737, its fix PR #2765 quoting WA Web's
 * WAWebHandleCompanionReqRefreshNotification: a new ADV secret, the current ref re-rendered).
 * `device` filters on the scanning phone.
 */
export interface RegRefreshRule {
  kind: 'reg-refresh';
  device?: string;
  count?: number;
}

/**
 * The server refuses a companion's pairing-code request (`link_code_companion_reg` stage
 * companion_hello) with an error IQ: 429 rate-overlimit (Baileys issue #2008) or 400 bad-request
 * (Baileys issue #2737, which also reports that rc14's requestPairingCode returns a code before this
 * answer comes). `device` filters on the phone number the code was asked for.
 */
export interface PairCodeRefusedRule {
  kind: 'pair-code-refused';
  code?: number;
  text?: string;
  device?: string;
  count?: number;
}

/**
 * The server fails the account's new-chat limit queries (the w:mex reach-out timelock and message
 * capping queries behind /instance/wa_messages_limits) with an error IQ (`code`, default 500
 * internal-server-error), as a GraphQL backend that is down answers; the limits themselves, the
 * refusals (463/475) and their notifications are untouched. `device` filters on the asking account.
 */
export interface LimitsQueryErrorRule {
  kind: 'limits-query-error';
  code?: number;
  device?: string;
  count?: number;
}

/**
 * Standing: a login or registration whose ClientPayload app version is older than `minVersion`
 * (e.g. "2.3000.1043857761") gets `<failure reason="405" location=…/>` and the socket closed, as
 * WhatsApp answers an outdated WhatsApp Web version (Baileys issues #1634, #1937: reason 405,
 * location cln/vll; whatsmeow's ConnectFailureClientOutdated). The current version is served at
 * GET /sim/wa-version the way web.whatsapp.com/sw.js carries it (`client_revision`).
 */
export interface ClientOutdatedRule {
  kind: 'client-outdated';
  minVersion: string;
  device?: string;
}

export type FaultRule =
  | AckFaultRule
  | LatencyFaultRule
  | SlowHandshakeRule
  | IgnorePingsRule
  | CorruptFaultRule
  | DropDeliveryRule
  | RejectLoginRule
  | AppStateFaultRule
  | AppStateExternalRule
  | AppStateConflictRule
  | AppStateBadMacRule
  | RegRefreshRule
  | PairCodeRefusedRule
  | ClientOutdatedRule
  | LimitsQueryErrorRule
  | UndecryptableFaultRule
  | OmitPnFaultRule;

export interface ActiveFault {
  id: number;
  rule: FaultRule;
  remaining: number | null;
  createdAt: number;
}

/** Immediate actions, executed once by the simulator. */
export type FaultAction =
  | { kind: 'drop'; device: string }
  | { kind: 'conflict'; device: string }
  | { kind: 'stream-error'; device: string; code?: number; reason?: string }
  | { kind: 'logout'; device: string; via?: 'stream-error' | 'failure' }
  | { kind: 'restart'; downMs?: number }
  | ReachoutTimelockFault
  | NewChatCapFault
  | { kind: 'clear' };

export type FaultRequest = FaultRule | FaultAction;

const RULE_KINDS = new Set([
  'ack',
  'latency',
  'slow-handshake',
  'ignore-pings',
  'corrupt',
  'drop-deliveries',
  'reject-login',
  'app-state',
  'app-state-external',
  'app-state-conflict',
  'app-state-bad-mac',
  'reg-refresh',
  'pair-code-refused',
  'client-outdated',
  'limits-query-error',
  'undecryptable',
  'omit-pn',
]);
const ACTION_KINDS = new Set(['drop', 'conflict', 'stream-error', 'logout', 'restart', 'clear', 'reachout-timelock', 'new-chat-cap']);

export function isFaultRule(request: FaultRequest): request is FaultRule {
  return RULE_KINDS.has(request.kind);
}

/** Validates an untrusted JSON body into a fault request. */
export function parseFaultRequest(body: unknown): FaultRequest {
  if (!body || typeof body !== 'object') {
    throw new SimError(400, 'fault body must be an object');
  }
  const b = body as Record<string, unknown>;
  const kind = b.kind;
  if (typeof kind !== 'string' || (!RULE_KINDS.has(kind) && !ACTION_KINDS.has(kind))) {
    throw new SimError(400, `unknown fault kind: ${String(kind)}`);
  }
  const optString = (key: string): string | undefined => {
    const v = b[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'string' && typeof v !== 'number') throw new SimError(400, `${key} must be a string`);
    return String(v);
  };
  const optNumber = (key: string): number | undefined => {
    const v = b[key];
    if (v === undefined || v === null) return undefined;
    const n = Number(v);
    if (!Number.isFinite(n) || n < 0) throw new SimError(400, `${key} must be a non-negative number`);
    return n;
  };
  const needDevice = (): string => {
    const device = optString('device');
    if (!device) throw new SimError(400, `fault ${kind} needs "device"`);
    return device;
  };
  switch (kind) {
    case 'ack': {
      const mode = b.mode ?? 'drop';
      if (mode !== 'drop' && mode !== 'delay' && mode !== 'error' && mode !== 'lost') throw new SimError(400, 'ack mode must be drop|delay|error|lost');
      return {
        kind,
        mode,
        error: optString('error') ?? (mode === 'error' ? '463' : undefined),
        delayMs: optNumber('delayMs'),
        device: optString('device'),
        count: optNumber('count'),
      };
    }
    case 'latency':
      return { kind, delayMs: optNumber('delayMs') ?? 0, device: optString('device') };
    case 'slow-handshake':
      return { kind, delayMs: optNumber('delayMs') ?? 0 };
    case 'ignore-pings':
      return { kind, device: optString('device') };
    case 'corrupt':
    case 'drop-deliveries':
      return { kind, device: optString('device'), count: optNumber('count') ?? 1 };
    case 'reject-login':
      return { kind, reason: optNumber('reason') ?? 401, device: optString('device'), count: optNumber('count') };
    case 'app-state':
      return { kind, code: optNumber('code') ?? 400, device: optString('device'), count: optNumber('count') ?? 1 };
    case 'app-state-external':
      return {
        kind,
        snapshot: b.snapshot !== false,
        externalAbove: b.externalAbove === null ? null : (optNumber('externalAbove') ?? 0),
        device: optString('device'),
      };
    case 'app-state-conflict': {
      const jid = optString('jid');
      if (!jid || !b.mod || typeof b.mod !== 'object') throw new SimError(400, 'app-state-conflict needs "jid" and "mod" (a chat modification)');
      return { kind, jid, mod: b.mod as Record<string, unknown>, device: optString('device'), count: optNumber('count') ?? 1 };
    }
    case 'app-state-bad-mac': {
      if (b.value !== undefined && (!b.value || typeof b.value !== 'object' || Array.isArray(b.value)))
        throw new SimError(400, 'app-state-bad-mac "value" must be a SyncActionValue object');
      return {
        kind,
        collection: optString('collection'),
        value: b.value as Record<string, unknown> | undefined,
        device: optString('device'),
        count: optNumber('count') ?? 1,
      };
    }
    case 'reg-refresh':
      return { kind, device: optString('device'), count: optNumber('count') ?? 1 };
    case 'pair-code-refused':
      return { kind, code: optNumber('code') ?? 429, text: optString('text'), device: optString('device'), count: optNumber('count') };
    case 'limits-query-error':
      return { kind, code: optNumber('code') ?? 500, device: optString('device'), count: optNumber('count') };
    case 'client-outdated': {
      const minVersion = optString('minVersion');
      if (!minVersion || !parseWaVersion(minVersion)) throw new SimError(400, 'client-outdated needs "minVersion" like 2.3000.1043857761');
      return { kind, minVersion, device: optString('device') };
    }
    case 'undecryptable': {
      const mode = b.mode ?? 'bad-mac';
      if (!UNDECRYPTABLE_MODES.includes(mode as UndecryptableMode)) throw new SimError(400, `undecryptable mode must be ${UNDECRYPTABLE_MODES.join('|')}`);
      return { kind, mode: mode as UndecryptableMode, device: optString('device'), count: optNumber('count') };
    }
    case 'omit-pn':
      return { kind, device: needDevice() };
    case 'drop':
    case 'conflict':
      return { kind, device: needDevice() };
    case 'stream-error':
      return { kind, device: needDevice(), code: optNumber('code'), reason: optString('reason') };
    case 'logout': {
      const via = b.via ?? 'stream-error';
      if (via !== 'stream-error' && via !== 'failure') throw new SimError(400, 'via must be stream-error|failure');
      return { kind, device: needDevice(), via };
    }
    case 'restart':
      return { kind, downMs: optNumber('downMs') };
    case 'reachout-timelock':
    case 'new-chat-cap':
      return parseSendLimitFault(kind, needDevice(), optNumber, optString);
    default:
      return { kind: 'clear' };
  }
}

/** "2.3000.1043857761" → [2, 3000, 1043857761]; undefined unless three non-negative integers. */
export function parseWaVersion(text: string): [number, number, number] | undefined {
  const parts = text.trim().split('.');
  if (parts.length !== 3 || !parts.every((p) => /^\d{1,10}$/.test(p))) return undefined;
  return parts.map(Number) as [number, number, number];
}

/** Negative when `a` is older than `b`. */
export function compareWaVersions(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < 3; i++) if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) - (b[i] ?? 0);
  return 0;
}

/** Matches a rule's device filter against a device: exact device JID, or any device of a user/phone. */
export type DeviceMatcher = (filter: string) => boolean;

export class FaultController implements FaultLookup {
  private readonly active: ActiveFault[] = [];
  private nextId = 1;

  add(rule: FaultRule): ActiveFault {
    const count = 'count' in rule ? rule.count : undefined;
    const fault: ActiveFault = { id: this.nextId++, rule, remaining: count ?? null, createdAt: Date.now() };
    this.active.push(fault);
    return fault;
  }

  list(): ActiveFault[] {
    return [...this.active];
  }

  remove(id: number): boolean {
    const index = this.active.findIndex((f) => f.id === id);
    if (index < 0) return false;
    this.active.splice(index, 1);
    return true;
  }

  clear(): void {
    this.active.length = 0;
  }

  /** First matching rule of a kind (that `accept` takes, if given), consuming one use of it. */
  take<K extends FaultRule['kind']>(
    kind: K,
    matches: DeviceMatcher,
    accept?: (rule: Extract<FaultRule, { kind: K }>) => boolean,
  ): Extract<FaultRule, { kind: K }> | undefined {
    for (let i = 0; i < this.active.length; i++) {
      const fault = this.active[i];
      if (fault.rule.kind !== kind) continue;
      const device = 'device' in fault.rule ? fault.rule.device : undefined;
      if (device && !matches(device)) continue;
      if (accept && !accept(fault.rule as Extract<FaultRule, { kind: K }>)) continue;
      if (fault.remaining !== null) {
        fault.remaining--;
        if (fault.remaining <= 0) this.active.splice(i, 1);
      }
      return fault.rule as Extract<FaultRule, { kind: K }>;
    }
    return undefined;
  }

  /** Like take() but without consuming (for standing conditions such as latency). */
  peek<K extends FaultRule['kind']>(kind: K, matches: DeviceMatcher): Extract<FaultRule, { kind: K }> | undefined {
    for (const fault of this.active) {
      if (fault.rule.kind !== kind) continue;
      const device = 'device' in fault.rule ? fault.rule.device : undefined;
      if (device && !matches(device)) continue;
      return fault.rule as Extract<FaultRule, { kind: K }>;
    }
    return undefined;
  }
}
