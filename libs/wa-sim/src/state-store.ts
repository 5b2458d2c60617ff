// Optional persistence of the simulator's state (`stateDir`): what a paired Baileys session depends
// on — the certificate root, accounts with the phones' Signal stacks, linked devices with their
// keys and offline queues, groups, newsletters, app state — so a pairing survives a restart. One
// JSON file (Buffers as base64, Baileys' BufferJSON), written debounced and atomically
// (temp file + rename). Sockets, pending IQs, QR refs, calls, faults and presence are not kept.
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'fs';
import { join } from 'path';
import { BufferJSON } from './baileys';
import type { AccountState } from './accounts';
import type { GroupState } from './group-state';
import type { Logger } from './logger';
import type { MessageRecordState } from './message-router';
import type { NewsletterState } from './newsletters';
import type { BusinessState } from './business';
import type { PhoneState } from './phone';
import type { ProfileState } from './profile';

export const STATE_FILE_NAME = 'wa-sim-state.json';
export const STATE_VERSION = 1;

export interface SimState {
  version: typeof STATE_VERSION;
  savedAt: string;
  /** Seed of the certificate chain (root, intermediate, Noise static key). */
  rootKeySeed: string;
  /** Base64 root public key derived from the seed; checked on load. */
  rootPublicKey: string;
  /** Salt of the LIDs given to accounts created from now on. */
  lidSalt: string;
  accounts: AccountState[];
  /** Phone-side stores (archive, peer requests, sent messages for retries) by phone number. */
  phones: Array<[string, PhoneState]>;
  groups: GroupState[];
  newsletters: NewsletterState[];
  /** Business profiles, catalogues and new-chat limits by phone number (absent in files written before them). */
  business?: BusinessState;
  /** The accounts' profile pictures (absent in files written before them). */
  profiles?: ProfileState;
  /** Who sent which message, so receipts for messages sent before the restart still route. */
  messages: MessageRecordState[];
}

export function stateFilePath(dir: string): string {
  return join(dir, STATE_FILE_NAME);
}

export function encodeState(state: SimState): string {
  return JSON.stringify(state, BufferJSON.replacer);
}

export function decodeState(text: string): SimState {
  const state = JSON.parse(text, BufferJSON.reviver) as SimState;
  if (!state || typeof state !== 'object' || state.version !== STATE_VERSION) {
    throw new Error(`unsupported simulator state version ${(state as { version?: unknown } | null)?.version}`);
  }
  if (typeof state.rootKeySeed !== 'string' || !Array.isArray(state.accounts)) throw new Error('simulator state file is incomplete');
  return state;
}

/** The saved state of `dir`, or undefined when there is none yet. A corrupt file is an error. */
export function readStateFile(dir: string): SimState | undefined {
  let text: string;
  try {
    text = readFileSync(stateFilePath(dir), 'utf-8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  try {
    return decodeState(text);
  } catch (err) {
    throw new Error(`cannot read ${stateFilePath(dir)}: ${(err as Error).message}`);
  }
}

/** Writes the state atomically: a temp file in the same directory, then rename over the old one. */
export function writeStateFile(dir: string, state: SimState): void {
  mkdirSync(dir, { recursive: true });
  const target = stateFilePath(dir);
  const temp = `${target}.${process.pid}.${Date.now()}.tmp`;
  try {
    writeFileSync(temp, encodeState(state), { mode: 0o600 });
    renameSync(temp, target);
  } catch (err) {
    rmSync(temp, { force: true });
    throw err;
  }
}

/** Saves `snapshot()` to `dir` at most once per `debounceMs` after a change, and on flush. */
export class StatePersister {
  private timer?: NodeJS.Timeout;
  private dirty = false;
  private closed = false;

  constructor(
    private readonly dir: string,
    private readonly snapshot: () => SimState,
    private readonly logger: Logger,
    private readonly debounceMs = 200,
  ) {}

  markDirty(): void {
    if (this.closed) return;
    this.dirty = true;
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.flush();
    }, this.debounceMs);
    this.timer.unref();
  }

  /** Writes now if anything changed since the last write. Errors are logged, never thrown. */
  flush(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (!this.dirty) return;
    this.dirty = false;
    try {
      writeStateFile(this.dir, this.snapshot());
    } catch (err) {
      this.logger.error({ err: (err as Error).message, dir: this.dir }, 'could not save simulator state');
    }
  }

  /** Saves one last time; later changes (a phone task finishing after stop) are not written. */
  close(): void {
    this.markDirty();
    this.flush();
    this.closed = true;
  }
}
