import type { Lease, NewOutboxEvent, Tx } from '@gw/persistence';

/** The options, limits and error of InboundStore (inbound-store.ts), shared with the modules it is made of. */

export type Work<T> = (tx: Tx, events: NewOutboxEvent[]) => Promise<T>;

export interface Waiting {
  lease: Lease;
  work: Work<unknown>;
  /** What the write touches (its messages, the chat whose row it updates), when it says: see waves(). */
  keys?: readonly string[];
  /** Stored even when the fence refuses it because the lease moved (see WriteOptions.idempotent). */
  idempotent: boolean;
  /** Written in a transaction of its own, outside the groups (see WriteOptions.alone). */
  alone: boolean;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

export interface WriteOptions {
  /**
   * The write changes nothing when run a second time and writes its events only when it inserted what
   * they announce (a received message, keyed by instance and message id): when the fence refuses it
   * because the lease moved, it runs once more without the fence (ADR 0034), since WhatsApp was already
   * told we have it and will not give it to the new holder.
   */
  idempotent?: boolean;
  /**
   * The write is long (a history chunk: up to ~1,000 messages, 1–5 s of statements): it runs in a
   * transaction of its own, fenced by its lease, outside the group transactions, so the writes of the
   * worker's other instances (receipts, the copies of sent messages a send waits for) do not wait for
   * its commit (issue #38: in a group they did, their send p99 17–25 s). Its instance's order holds: it
   * starts after the instance's earlier writes committed, and the instance's later writes wait for it.
   */
  alone?: boolean;
}

/**
 * Times a write is tried when it fails alone for a reason of its own (not a lost lease, not a database
 * out of reach), 200 ms × attempt apart; its instance's later writes wait.
 */
export const ATTEMPTS = 3;
/** A write that meets no database is tried again this often at most (backing off from 200 ms). */
export const OUTAGE_RETRY_MAX_MS = 2_000;
/** Without a lease keeper to ask (`held`), a write waits out a database outage this long at most. */
export const OUTAGE_WAIT_DEFAULT_MS = 10_000;

/** Writes of their own in flight at once by default: with two groups, four of the pool's connections (10 by default). */
export const MAX_ALONE_IN_FLIGHT = 2;

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * What InboundStore.write rejects with when a write failed ATTEMPTS times alone: the store already
 * retried it in its instance's order, so a caller must not write it again (it would land after the
 * writes queued behind it). `cause` is the last error.
 */
export class InboundWriteFailedError extends Error {
  constructor(override readonly cause: unknown) {
    super(`inbound write failed ${ATTEMPTS} times: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = 'InboundWriteFailedError';
  }
}

/**
 * What InboundStore.write rejects with once the writes of its lease were dropped (a drain past its
 * budget, issue #39): nothing of it was written. A received message among them was never receipted
 * (ADR 0035), so WhatsApp delivers it again, to the heir.
 */
export class InboundWriteDroppedError extends Error {
  constructor(instanceId: string) {
    super(`inbound write of ${instanceId} dropped: the instance is handed over without it`);
    this.name = 'InboundWriteDroppedError';
  }
}

export interface InboundStoreOptions {
  /** Writes per group transaction at most. */
  maxBatch: number;
  /** Group transactions in flight at once. */
  maxInFlight: number;
  /**
   * Writes of their own (WriteOptions.alone) in flight at once, besides the groups (default
   * MAX_ALONE_IN_FLIGHT); one more waits, its instance's later writes behind it.
   */
  maxAloneInFlight?: number;
  /** Told of every group transaction that committed: its writes and how long it took (metrics). */
  onGroup?: (writes: number, seconds: number) => void;
  /**
   * Whether this lease is still the worker's (its keeper has not given it up): a write that meets no
   * database (issue #39) waits and tries again for as long as this says yes, then fails. Without it, a
   * write waits out an outage OUTAGE_WAIT_DEFAULT_MS at most.
   */
  held?: (lease: Lease) => boolean;
}

/** Told when an instance's writes stop reaching the database (`true`) and when one got through again (`false`). */
export type StallListener = (stalled: boolean) => void;

/**
 * Two transactions in flight, up to 64 writes each; the writes of every socket of the worker that
 * arrive meanwhile go in the next one. A group's writes run one after the other on its connection, so
 * one in flight made the inbound writes fall behind the sends under load (ADR 0012: bench/send,
 * eventsDrainSeconds 0.42–0.48 s here). Four of 32 (until ADR 0021) made groups small: once a group's
 * rounds went in waves, two of 64 (the same 128 writes in flight at most) took bench/send from
 * 1.55–1.71 to 1.20–1.28 statements per send and Postgres from 0.79–0.92 to 0.62–0.73 ms per send, the
 * events written 0.07–0.30 s after the last send (0.05–0.09 before).
 */
export const INBOUND_STORE_DEFAULTS: InboundStoreOptions = { maxBatch: 64, maxInFlight: 2 };
