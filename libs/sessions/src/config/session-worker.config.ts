import { hostname } from 'node:os';
import { ConfigError, type EnvReader } from '@gw/platform';
import type { WAVersion } from '../baileys';
import { parseWaVersion, WA_WEB_SW_URL } from '../socket/wa-version';

/** Test-only: point Baileys at the loopback simulator and trust its certificate root. */
export interface SimulatorSeam {
  websocketUrl: string;
  rootPublicKey: Buffer;
}

export interface SessionWorkerConfig {
  workerId: string;
  /** Most sessions one worker holds (WORKER_CAPACITY). */
  capacity: number;
  /** Lease lifetime (LEASE_TTL_MS); renewed every ttl/3. */
  leaseTtlMs: number;
  /**
   * How long past the lease's lapse the sessions ride out a database that cannot be reached at all
   * (LEASE_OUTAGE_RIDE_MS, ADR 0037): a failover shorter than lease + ride keeps every session.
   */
  leaseOutageRideMs: number;
  /** How often the worker looks for orphaned instances to adopt. */
  reconcileIntervalMs: number;
  /**
   * How long after its start the worker first looks for orphans (WORKER_FIRST_RECONCILE_MS; default one
   * `reconcileIntervalMs`): workers started together all count in the fair share of the first look. A worker
   * that is the only one (the embedded default, one worker per process and bus) has nobody to wait for: 0.
   */
  firstReconcileDelayMs?: number;
  /**
   * Whether a worker over its fair share hands instances to workers with room, one at a time (WORKER_REBALANCE,
   * default true; ADR 0043): a worker that starts, comes back or is added takes its share of the running ones.
   */
  rebalance: boolean;
  /**
   * A worker that just started answers `/ready` 503 until it has settled (its part of the instances taken, their
   * sessions open), at most this long after its start (WORKER_READY_SETTLE_MS, default 60 s; 0: ready as soon as
   * Postgres and NATS answer). A rolling deploy waits for it before it stops the next worker (ADR 0057).
   */
  readySettleMaxMs: number;
  /** A QR code stays valid this long, a pairing code `pairCodeTtlMs`; then the pairing ends. */
  qrTtlMs: number;
  pairCodeTtlMs: number;
  /** How long a connect request waits for a QR/pairing code, and for `open` of a paired instance. */
  pairingReplyWaitMs: number;
  reconnectReplyWaitMs: number;
  /** Reconnect backoff of paired sessions: exponential from base, capped, with jitter. */
  reconnectBaseMs: number;
  reconnectMaxMs: number;
  /**
   * Baileys' query timeout. A query in flight when its socket closes is never rejected, only timed
   * out, so this also bounds how long a closed socket's timers linger.
   */
  queryTimeoutMs: number;
  /** Set only when both seam variables are set. */
  simulator?: SimulatorSeam;
  /** CIDRs the SSRF guard lets through for media URLs (SSRF_ALLOWLIST). */
  ssrfAllowlist?: string[];
  /**
   * Received items held and not yet stored before a socket stops being read (a message is one, a
   * history chunk its messages, chats and contacts): per socket (INBOUND_QUEUE_MAX) and for the worker
   * (INBOUND_WORKER_QUEUE_MAX); it reads again at a quarter, a few sockets at a time (ADR 0013).
   */
  inboundQueueMax: number;
  inboundWorkerQueueMax: number;
  /**
   * Outbound sends without the server's ack (docs/guarantees.md): a send waits this long for its ack
   * before it answers Pending (SEND_ACK_TIMEOUT_MS); a message still unacked this long after it was
   * relayed goes again with the same id (UNACKED_RESEND_AFTER_MS), until this long after its first
   * relay, when it is Failed with the reason (UNACKED_GIVE_UP_MS). The sweep looks every
   * `unackedSweepMs`.
   */
  sendAckTimeoutMs: number;
  unackedResendAfterMs: number;
  unackedGiveUpMs: number;
  unackedSweepMs: number;
  /** Reconnect handshakes of this worker at once (HANDSHAKE_CONCURRENCY): a server restart closes every socket together. */
  handshakeConcurrency: number;
  /**
   * A reconnect's handshake longer than this (HANDSHAKE_HOLD_MS) is closed and queued again, so the gate's
   * bound holds however slow handshakes get. Above Baileys' own connect timeout (20 s) by default.
   */
  handshakeHoldMs: number;
  /** How long a send whose connection closed under it waits for the session to be open again before handing it back. */
  sendReconnectWaitMs: number;
  /**
   * The WhatsApp Web version to log in with (WA_WEB_VERSION, e.g. 2.3000.1043857761; else Baileys'
   * own), and the page that publishes the current one (WA_VERSION_URL, `"client_revision":N` as
   * web.whatsapp.com/sw.js, its default outside the simulator): looked up when WhatsApp refuses a
   * login as outdated (405).
   */
  waWebVersion?: WAVersion;
  waVersionUrl?: string;
}

export const SESSION_WORKER_DEFAULTS = {
  capacity: 500,
  leaseTtlMs: 10_000,
  leaseOutageRideMs: 60_000,
  reconcileIntervalMs: 2_000,
  rebalance: true,
  readySettleMaxMs: 60_000,
  qrTtlMs: 120_000,
  pairCodeTtlMs: 300_000,
  pairingReplyWaitMs: 20_000,
  reconnectReplyWaitMs: 5_000,
  reconnectBaseMs: 1_000,
  reconnectMaxMs: 30_000,
  queryTimeoutMs: 60_000,
  inboundQueueMax: 1_000,
  inboundWorkerQueueMax: 20_000,
  sendAckTimeoutMs: 15_000,
  unackedResendAfterMs: 30_000,
  unackedGiveUpMs: 300_000,
  unackedSweepMs: 5_000,
  sendReconnectWaitMs: 15_000,
  handshakeConcurrency: 32,
  handshakeHoldMs: 30_000,
} as const;

/** Builds a config from defaults plus overrides (embedding and tests). */
export function sessionWorkerConfig(overrides: Partial<SessionWorkerConfig> = {}): SessionWorkerConfig {
  return { workerId: `${hostname()}-${process.pid}`, ...SESSION_WORKER_DEFAULTS, ...overrides };
}

/**
 * The worker's variables: WORKER_ID (default hostname-pid), WORKER_CAPACITY, WORKER_REBALANCE, WORKER_READY_SETTLE_MS, WORKER_FIRST_RECONCILE_MS, LEASE_TTL_MS, LEASE_OUTAGE_RIDE_MS,
 * INBOUND_QUEUE_MAX, INBOUND_WORKER_QUEUE_MAX, SEND_ACK_TIMEOUT_MS, UNACKED_RESEND_AFTER_MS,
 * UNACKED_GIVE_UP_MS, WA_WEB_VERSION, WA_VERSION_URL, HANDSHAKE_CONCURRENCY, and the
 * simulator seam WA_WEBSOCKET_URL + WA_CERT_ROOT_PUBLIC_KEY (both or nothing).
 */
export function readSessionWorkerConfig(env: EnvReader): SessionWorkerConfig {
  const websocketUrl = env.url('WA_WEBSOCKET_URL', ['ws:', 'wss:']);
  const rootPublicKey = env.base64('WA_CERT_ROOT_PUBLIC_KEY', 32);
  return sessionWorkerConfig({
    workerId: env.string('WORKER_ID', `${hostname()}-${process.pid}`),
    capacity: env.integer('WORKER_CAPACITY', SESSION_WORKER_DEFAULTS.capacity, { min: 1, max: 100_000 }),
    rebalance: env.boolean('WORKER_REBALANCE', SESSION_WORKER_DEFAULTS.rebalance),
    readySettleMaxMs: env.integer('WORKER_READY_SETTLE_MS', SESSION_WORKER_DEFAULTS.readySettleMaxMs, { min: 0, max: 3_600_000 }),
    firstReconcileDelayMs: env.integer('WORKER_FIRST_RECONCILE_MS', SESSION_WORKER_DEFAULTS.reconcileIntervalMs, { min: 0, max: 600_000 }),
    leaseTtlMs: env.integer('LEASE_TTL_MS', SESSION_WORKER_DEFAULTS.leaseTtlMs, { min: 1_000, max: 600_000 }),
    leaseOutageRideMs: env.integer('LEASE_OUTAGE_RIDE_MS', SESSION_WORKER_DEFAULTS.leaseOutageRideMs, { min: 0, max: 3_600_000 }),
    inboundQueueMax: env.integer('INBOUND_QUEUE_MAX', SESSION_WORKER_DEFAULTS.inboundQueueMax, { min: 4, max: 1_000_000 }),
    inboundWorkerQueueMax: env.integer('INBOUND_WORKER_QUEUE_MAX', SESSION_WORKER_DEFAULTS.inboundWorkerQueueMax, { min: 4, max: 10_000_000 }),
    sendAckTimeoutMs: env.integer('SEND_ACK_TIMEOUT_MS', SESSION_WORKER_DEFAULTS.sendAckTimeoutMs, { min: 1_000, max: 600_000 }),
    unackedResendAfterMs: env.integer('UNACKED_RESEND_AFTER_MS', SESSION_WORKER_DEFAULTS.unackedResendAfterMs, { min: 1_000, max: 3_600_000 }),
    handshakeConcurrency: env.integer('HANDSHAKE_CONCURRENCY', SESSION_WORKER_DEFAULTS.handshakeConcurrency, { min: 1, max: 10_000 }),
    handshakeHoldMs: env.integer('HANDSHAKE_HOLD_MS', SESSION_WORKER_DEFAULTS.handshakeHoldMs, { min: 1_000, max: 600_000 }),
    unackedGiveUpMs: env.integer('UNACKED_GIVE_UP_MS', SESSION_WORKER_DEFAULTS.unackedGiveUpMs, { min: 5_000, max: 86_400_000 }),
    simulator: websocketUrl && rootPublicKey ? { websocketUrl, rootPublicKey } : undefined,
    waWebVersion: readWaVersion(env),
    waVersionUrl: env.url('WA_VERSION_URL', ['http:', 'https:'], websocketUrl && rootPublicKey ? undefined : WA_WEB_SW_URL),
    ssrfAllowlist: (env.optionalString('SSRF_ALLOWLIST') ?? '')
      .split(',')
      .map((entry) => entry.trim())
      .filter(Boolean),
  });
}

function readWaVersion(env: EnvReader): WAVersion | undefined {
  const raw = env.optionalString('WA_WEB_VERSION');
  if (raw === undefined) return undefined;
  const version = parseWaVersion(raw);
  if (!version) throw new ConfigError('WA_WEB_VERSION', `must look like 2.3000.1043857761, got "${raw}"`);
  return version;
}
