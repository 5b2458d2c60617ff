import { databaseUnavailable, FencedOutError, type AuthStateRepository, type KeyMutation, type Lease } from '@gw/persistence';
import type { Logger } from '@gw/platform';
import {
  initAuthCreds,
  type AuthenticationCreds,
  type AuthenticationState,
  type SignalDataSet,
  type SignalDataTypeMap,
  type SignalKeyStore,
  type SignalKeyType,
} from '../baileys';
import { RECEIVED_PLAINTEXT } from '../socket/received-plaintexts';
import { deserializeCreds, deserializeKey, serializeAuthValue } from './auth-serialization';
import { cachedKeyStore } from './key-cache';
import { KeyWriteQueue } from './key-write-queue';

/** Bound of the known-missing set (a few KB); past it the set starts over. */
const MAX_ABSENT = 5_000;
const absentKey = (type: string, id: string) => `${type}\u0000${id}`;
/** A key write that meets no database is tried again this often at most (backing off from 100 ms). */
const OUTAGE_RETRY_MAX_MS = 1_000;
/** Without `outageWaitMs`: how long a write waits out a database outage. */
const OUTAGE_WAIT_DEFAULT_MS = 10_000;
/**
 * Key mutations a decrypt's commit may leave queued before it waits for them like any other write
 * (ADR 0048): a database that falls behind slows the socket's decrypts down instead of growing the queue.
 */
const MAX_BEHIND = 512;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A Signal key or creds write that could not be made durable: the store was closed (the session ended
 * or lost its lease) while it waited, or it kept failing. Baileys' `keys.set` rejects with it; the
 * session has been stopped (`onWriteFailed`), so no socket goes on with keys that are not stored.
 */
export class AuthStateWriteError extends Error {
  constructor(
    instanceId: string,
    reason: string,
    override readonly cause?: unknown,
  ) {
    super(`auth state of ${instanceId} not stored: ${reason}`);
    this.name = 'AuthStateWriteError';
  }
}

export interface PostgresAuthStateOptions {
  repository: AuthStateRepository;
  lease: Lease;
  logger: Logger;
  /** Called once, on the first write refused because another worker took the lease over. */
  onFenced: (error: FencedOutError) => void;
  /** Delay before a failed (non-fenced) creds write is tried again. */
  retryDelayMs?: number;
  /**
   * How long a write waits out a database that does not answer (issue #39), trying again, before it
   * gives up: as long as the keeper keeps the session (LEASE_TTL_MS + LEASE_OUTAGE_RIDE_MS), since it
   * stops the session after that anyway (then close() ends the wait at once). Default OUTAGE_WAIT_DEFAULT_MS.
   */
  outageWaitMs?: number;
  /**
   * Called once when a write finally fails (not fencing, which is onFenced): the session must stop at
   * once, before Baileys goes on (uploads pre-keys, advances sessions) with keys that are not stored.
   */
  onWriteFailed?: (error: AuthStateWriteError) => void;
}

/**
 * Baileys' AuthenticationState backed by Postgres, with two modes:
 *
 * - buffered (a new pairing): creds and keys live only in memory. `requestPairingCode` sets
 *   `creds.me` before the phone confirms; persisting that half-state would make the next connect
 *   send a login instead of a registration. `persist()` writes the whole snapshot once the device
 *   is registered and switches to write-through.
 * - persistent: every `keys.set()` call is one fenced transaction; `saveCreds()` writes the whole
 *   creds object (Baileys mutates it in place).
 *
 * The contract with Baileys (issue #39): `keys.set()` resolves only once its keys are durable. While the
 * database does not answer it waits and tries again (up to `outageWaitMs`, as long as the keeper keeps the session); a
 * write that finally fails, or is cut short by close(), rejects, and a failure stops the session first
 * (`onWriteFailed`): Baileys commits its key transactions before it uploads pre-keys or sends, so it
 * never goes on with keys we did not store (the `Invalid PreKey ID` after a failover).
 *
 * Every write proves the lease inside its transaction. The first FencedOutError flips the store to
 * "fenced": it never touches the database again and tells the session to stop.
 */
export class PostgresAuthState {
  readonly state: AuthenticationState;
  private readonly buffered = new Map<SignalKeyType, Map<string, unknown>>();
  private readonly credsWriter: CoalescingWriter;
  /**
   * The credentials' text as stored (read at load, or last written): a `creds.update` that leaves them
   * as stored writes nothing. Baileys announces one at every login, most often with nothing new in it.
   */
  private storedCreds: string | null = null;
  private persistent: boolean;
  private fenced = false;
  private closed = false;
  /** A write finally failed: the session was told to stop; every later write fails at once. */
  private failed: AuthStateWriteError | null = null;
  /**
   * Keys read and found missing. The cache (cachedKeyStore, as Baileys') remembers only keys that
   * exist, and asks for some that never will (a `tctoken` per contact, three times per send). While
   * the lease is ours nobody else writes this instance's keys, so a miss stays a miss until we set it.
   */
  private readonly absent = new Set<string>();
  private writes = 0;
  /** Writes that have started; a logout waits for them so none lands after the credentials are wiped. */
  private readonly inFlight = new Set<Promise<void>>();
  /** Baileys' key commits handed over and not settled yet (see settle()). */
  private readonly commits = new Set<Promise<void>>();
  /** A key commit failed (not stored): settle() answers false from then on. */
  private commitFailed = false;
  /** The Signal key writes, in order, each carrying what was queued while the one before was written (ADR 0048). */
  private readonly keyWrites: KeyWriteQueue;

  private constructor(
    private readonly options: PostgresAuthStateOptions,
    creds: AuthenticationCreds,
    persistent: boolean,
  ) {
    this.persistent = persistent;
    const store: SignalKeyStore = {
      get: async <T extends SignalKeyType>(type: T, ids: string[]) => (await this.getKeys(type, ids)) as { [id: string]: SignalDataTypeMap[T] },
      set: (data) => this.setKeys(data),
    };
    // Read-through/write-through cache in front: Baileys reads sessions and sender keys on every message.
    const cached = cachedKeyStore(store);
    // Each commit of Baileys is tracked from the moment Baileys hands it over: settle() waits for every one of them.
    this.state = { creds, keys: { ...cached, get: (type, ids) => cached.get(type, ids), set: (data) => this.track(Promise.resolve(cached.set(data))) } };
    this.credsWriter = new CoalescingWriter(() => this.writeCreds(), options.retryDelayMs ?? 1000, options.logger);
    this.keyWrites = new KeyWriteQueue((keys) => this.durably('keys', () => this.guard(() => this.options.repository.write(this.options.lease, { keys }))));
  }

  /**
   * The stored credentials of a paired instance, or null when nothing is stored. `stored`: their text as
   * read under this lease moments ago (an adoption reads them with the instance's row), not read again.
   */
  static async load(options: PostgresAuthStateOptions, stored?: string | null): Promise<PostgresAuthState | null> {
    const text = stored !== undefined ? stored : await options.repository.readCreds(options.lease.instanceId);
    if (text === null) return null;
    const state = new PostgresAuthState(options, deserializeCreds(text), true);
    state.storedCreds = text;
    return state;
  }

  /** Fresh credentials for a new pairing, kept in memory until `persist()`. */
  static fresh(options: PostgresAuthStateOptions): PostgresAuthState {
    return new PostgresAuthState(options, initAuthCreds(), false);
  }

  get creds(): AuthenticationCreds {
    return this.state.creds;
  }

  get isPersistent(): boolean {
    return this.persistent;
  }

  /** Call on every `creds.update`. Never rejects: failures are logged and retried, fencing stops the session. */
  saveCreds(): Promise<void> {
    if (!this.persistent || this.closed) return Promise.resolve();
    return this.credsWriter.request();
  }

  /**
   * First flush of a new pairing: the whole in-memory snapshot replaces whatever an earlier linked
   * device left behind, in one fenced transaction. Afterwards every write goes straight through.
   */
  async persist(): Promise<void> {
    if (this.persistent) return;
    this.assertWritable();
    const keys: KeyMutation[] = [];
    for (const [type, values] of this.buffered) {
      for (const [id, value] of values) keys.push({ type, id, value: serializeAuthValue(value) });
    }
    const creds = serializeAuthValue(this.creds);
    await this.guard(() => this.options.repository.replace(this.options.lease, { creds, keys }));
    this.storedCreds = creds;
    this.buffered.clear();
    this.persistent = true;
  }

  /**
   * Waits until every Signal key commit Baileys has handed over, and every creds write requested, is
   * stored (issue #39: a drain hands the lease over only after this). A send's stanza leaves only once
   * its key transaction committed (our patch of `relayMessage`, ADR 0069), but a commit under way when
   * the socket closes must still land before the lease goes: after the hand-over the fence refuses it,
   * and the keys the heir loads would be older than what this worker last used (a decrypt's, a retry's).
   * True when all of it is stored; false when a write failed,
   * the store was closed, or `timeoutMs` passed first (the lease must then not be handed over).
   */
  async settle(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + Math.max(0, timeoutMs);
    for (;;) {
      // A commit whose stanza just went out reaches set() a few microtasks later: look after a turn.
      await new Promise((resolve) => setImmediate(resolve));
      if (this.commitFailed || this.failed || this.fenced || this.keyWrites.refused) return false;
      const pending = [...this.commits, ...this.credsWriter.pending(), ...(this.keyWrites.busy ? [this.keyWrites.stored()] : [])];
      const left = deadline - Date.now();
      if (pending.length === 0 && !this.credsWriter.unstored) return true;
      if (left <= 0 || (pending.length === 0 && this.closed)) return false;
      // A creds write that failed is tried again on a timer: wait for that one too.
      if (pending.length === 0) pending.push(sleep(Math.min(left, 100)).then(() => undefined));
      let timer: NodeJS.Timeout | undefined;
      const expired = new Promise<'expired'>((resolve) => (timer = setTimeout(() => resolve('expired'), left)));
      const outcome = await Promise.race([Promise.allSettled(pending), expired]);
      clearTimeout(timer);
      if (outcome === 'expired') return false;
    }
  }

  /**
   * Resolves once every Signal key write handed over so far is stored, rejects if one of them cannot
   * be: a received message's receipt waits for it (HeldAcks), since its decrypt's commit did not (ADR 0048).
   */
  keysStored(): Promise<void> {
    return this.persistent ? this.keyWrites.stored() : Promise.resolve();
  }

  /** Keeps `commit` in `commits` until it settles, remembering a failure (it still rejects to Baileys). */
  private track(commit: Promise<void>): Promise<void> {
    this.commits.add(commit);
    commit.then(
      () => this.commits.delete(commit),
      () => {
        this.commits.delete(commit);
        this.commitFailed = true;
      },
    );
    return commit;
  }

  /** Stops all writes for good (session ended or lease lost): later writes are dropped. */
  close(): void {
    this.closed = true;
    this.credsWriter.cancel();
    // Queued writes not yet under way are not stored: their receipts are never sent, so WhatsApp
    // delivers those messages again, and the sessions as stored decrypt them again.
    this.keyWrites.refuse(this.failed ?? new AuthStateWriteError(this.options.lease.instanceId, 'the session has ended'));
  }

  /** close(), then waits until writes already under way have committed or failed. */
  async closeAndDrain(): Promise<void> {
    this.close();
    await Promise.allSettled([...this.inFlight]);
  }

  private async getKeys(type: SignalKeyType, ids: string[]): Promise<Record<string, unknown>> {
    const result: Record<string, unknown> = {};
    if (!this.persistent) {
      const values = this.buffered.get(type);
      for (const id of ids) {
        const value = values?.get(id);
        if (value !== undefined) result[id] = value;
      }
      return result;
    }
    const wanted: string[] = [];
    for (const id of ids) {
      // A write still queued is newer than the database (ADR 0048).
      const queued = this.keyWrites.pending(type, id);
      if (queued) {
        if (queued.value !== null) result[id] = deserializeKey(type, queued.value);
      } else if (!this.absent.has(absentKey(type, id))) wanted.push(id);
    }
    if (wanted.length === 0) return result;
    const writesBefore = this.writes;
    const rows = await this.readDurably(() => this.options.repository.readKeys(this.options.lease.instanceId, type, wanted));
    for (const [id, text] of rows) result[id] = deserializeKey(type, text);
    // A write that overlapped the read may have stored one of them: remember nothing then.
    if (this.writes === writesBefore) for (const id of wanted) if (!rows.has(id)) this.rememberAbsent(type, id);
    return result;
  }

  private rememberAbsent(type: SignalKeyType, id: string): void {
    if (this.absent.size >= MAX_ABSENT) this.absent.clear();
    this.absent.add(absentKey(type, id));
  }

  private async setKeys(data: SignalDataSet): Promise<void> {
    // A dead session's late writes are refused, never resolved as if stored: its socket is gone and
    // another holder may write now.
    if (this.closed) throw this.failed ?? new AuthStateWriteError(this.options.lease.instanceId, 'the session has ended');
    if (!this.persistent) {
      for (const [type, values] of Object.entries(data) as Array<[SignalKeyType, Record<string, unknown> | undefined]>) {
        let bucket = this.buffered.get(type);
        if (!bucket) this.buffered.set(type, (bucket = new Map()));
        for (const [id, value] of Object.entries(values ?? {})) {
          if (value === null || value === undefined) bucket.delete(id);
          else bucket.set(id, value);
        }
      }
      return;
    }
    this.assertWritable();
    const keys: KeyMutation[] = [];
    for (const [type, values] of Object.entries(data)) {
      for (const [id, value] of Object.entries((values ?? {}) as Record<string, unknown>)) {
        keys.push({ type, id, value: value === null || value === undefined ? null : serializeAuthValue(value) });
      }
    }
    if (keys.length === 0) return;
    // Whatever is written is no longer known absent (a failed write only costs a read later).
    this.writes++;
    for (const key of keys) this.absent.delete(absentKey(key.type, key.id));
    // One call, one batch: Baileys commits several key types together and expects all or none. Queued
    // in order behind the write under way, merged with whatever else waits for it (ADR 0048).
    const stored = this.keyWrites.enqueue(keys);
    // (before and after: a read overlapping either end of the write remembers nothing)
    void stored.then(
      () => this.writes++,
      () => this.writes++,
    );
    // A decrypt's commit goes on at once: what depends on it waits for keysStored() (its receipt) or
    // settle() (a drain). Every other write (pre-keys before their upload, a send's session) is stored first.
    if (isDecryptCommit(data) && this.keyWrites.size <= MAX_BEHIND) return;
    await stored;
  }

  /**
   * Runs `write` until it is durable: a database that does not answer is waited for (backing off) up
   * to `outageWaitMs`; close() ends the wait. Fencing is thrown as it is (onFenced stops the session);
   * any other failure stops the session (onWriteFailed) and is thrown as an AuthStateWriteError.
   */
  private async durably(what: string, write: () => Promise<void>): Promise<void> {
    const waitMs = this.options.outageWaitMs ?? OUTAGE_WAIT_DEFAULT_MS;
    const started = Date.now();
    for (let attempt = 1; ; attempt++) {
      if (this.failed) throw this.failed;
      if (this.closed) throw new AuthStateWriteError(this.options.lease.instanceId, `the session ended before the ${what} were stored`);
      try {
        return await write();
      } catch (error) {
        if (error instanceof FencedOutError) throw error;
        if (databaseUnavailable(error) && Date.now() - started < waitMs && !this.closed) {
          if (attempt === 1) this.options.logger.warn({ err: error, what }, 'auth state write meets no database; waiting for it');
          await sleep(Math.min(OUTAGE_RETRY_MAX_MS, 100 * attempt));
          continue;
        }
        throw this.fail(what, error);
      }
    }
  }

  /**
   * A key read that meets no database waits for it as a write does (durably(): up to `outageWaitMs`,
   * backing off; close() ends the wait), so a decrypt during a database outage waits instead of failing,
   * its message lost. A read failing for any other reason, or past the wait, throws as it came. (Baileys'
   * cache gave reads this wait by its one mutex: a read queued behind a write that was waiting.)
   */
  private async readDurably<T>(read: () => Promise<T>): Promise<T> {
    const waitMs = this.options.outageWaitMs ?? OUTAGE_WAIT_DEFAULT_MS;
    const started = Date.now();
    for (let attempt = 1; ; attempt++) {
      try {
        return await read();
      } catch (error) {
        if (!databaseUnavailable(error) || Date.now() - started >= waitMs || this.closed || this.failed) throw error;
        if (attempt === 1) this.options.logger.warn({ err: error }, 'a Signal key read meets no database; waiting for it');
        await sleep(Math.min(OUTAGE_RETRY_MAX_MS, 100 * attempt));
      }
    }
  }

  /** A write finally failed: stop the session once (no socket may go on with keys not stored). */
  private fail(what: string, cause: unknown): AuthStateWriteError {
    if (this.failed) return this.failed;
    const error = new AuthStateWriteError(this.options.lease.instanceId, `the ${what} write failed`, cause);
    this.failed = error;
    this.options.logger.error({ err: cause, what }, 'auth state write failed; stopping the session');
    this.close();
    this.options.onWriteFailed?.(error);
    return error;
  }

  private async writeCreds(): Promise<void> {
    if (this.closed || this.fenced) return;
    const text = serializeAuthValue(this.creds);
    if (text === this.storedCreds) return;
    await this.durably('creds', () => this.guard(() => this.options.repository.write(this.options.lease, { creds: text })));
    this.storedCreds = text;
  }

  private assertWritable(): void {
    if (this.fenced) throw new FencedOutError(this.options.lease.instanceId);
  }

  /** Runs a write; the first FencedOutError marks the store fenced and notifies the session once. */
  private async guard(write: () => Promise<void>): Promise<void> {
    const running = write();
    this.inFlight.add(running);
    try {
      await running;
    } catch (error) {
      if (error instanceof FencedOutError && !this.fenced) {
        this.fenced = true;
        this.credsWriter.cancel();
        this.options.onFenced(error);
      }
      throw error;
    } finally {
      this.inFlight.delete(running);
    }
  }
}

/**
 * Whether Baileys is committing a decrypt's key transaction: it carries the received plaintext
 * (ReceivedPlaintexts.keep, inside the decrypt's transaction, ADR 0035).
 */
function isDecryptCommit(data: SignalDataSet): boolean {
  const plaintexts = (data as Record<string, Record<string, unknown> | undefined>)[RECEIVED_PLAINTEXT];
  return plaintexts !== undefined && Object.values(plaintexts).some((value) => value !== null && value !== undefined);
}

/**
 * Serialises creds writes and coalesces bursts: each run writes the creds as they are at that moment,
 * so at most one run is queued behind the one in flight. A failed run (other than fencing) is retried
 * after a delay; the promise returned to callers always resolves.
 */
class CoalescingWriter {
  private running: Promise<void> | null = null;
  private queued: Promise<void> | null = null;
  private retryTimer: NodeJS.Timeout | undefined;
  private cancelled = false;
  /** The last run failed and no run has succeeded since (a retry is on its timer). */
  unstored = false;

  constructor(
    private readonly run: () => Promise<void>,
    private readonly retryDelayMs: number,
    private readonly logger: Logger,
  ) {}

  request(): Promise<void> {
    if (this.cancelled) return Promise.resolve();
    if (this.queued) return this.queued;
    if (!this.running) return (this.running = this.execute());
    const after = this.running;
    this.queued = after.then(() => {
      this.queued = null;
      return (this.running = this.execute());
    });
    return this.queued;
  }

  /** The write under way and the one queued behind it (settle() waits for them). */
  pending(): Array<Promise<void>> {
    return [this.running, this.queued].filter((write): write is Promise<void> => write !== null);
  }

  cancel(): void {
    this.cancelled = true;
    clearTimeout(this.retryTimer);
  }

  private async execute(): Promise<void> {
    try {
      await this.run();
      this.unstored = false;
    } catch (error) {
      this.unstored = true;
      if (error instanceof FencedOutError || error instanceof AuthStateWriteError || this.cancelled) return;
      this.logger.error({ err: error }, 'saving auth credentials failed; retrying');
      clearTimeout(this.retryTimer);
      this.retryTimer = setTimeout(() => void this.request(), this.retryDelayMs);
      this.retryTimer.unref();
    } finally {
      if (!this.queued) this.running = null;
    }
  }
}
