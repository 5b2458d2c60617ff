import { AsyncLocalStorage } from 'node:async_hooks';
import type { Logger } from '@gw/platform';
import type { WAPatchName, WASocket } from '@whiskeysockets/baileys';
import { macMismatchOf } from '../messaging/app-state-collection';

type Socket = Pick<WASocket, 'authState' | 'resyncAppState'>;

/** A collection fetched again this many times within RECOVERY_WINDOW_MS at most; past that, its mismatches are only logged. */
export const MAX_RECOVERIES = 3;
export const RECOVERY_WINDOW_MS = 60_000;
/** A fetch again that failed (its snapshot blob not downloaded, the socket gone…) is tried again after this long, within MAX_RECOVERIES. */
export const RETRY_DELAY_MS = 10_000;

/**
 * Fetches a collection again from its snapshot when rc14's own sync took a patch whose MACs do not match.
 *
 * With `appStateMacVerification` on, rc14 refuses what does not match, but only in part: the record is
 * dropped (or the patch skipped) and the LT hash mismatch that follows is a warning, while the collection's
 * version moves past the refused patch, so the genuine change is never fetched. whatsmeow instead fails the
 * patch list and fetches the collection again with a snapshot (appstate ErrMismatchingLTHash); WA Web marks
 * the collection fatal and resyncs it from a snapshot too. We do the same, from rc14's warning (its only
 * sign): the collection's stored version is dropped, once the sync that found the mismatch has stored its
 * own (the same key transaction), and the collection is synced again from scratch, as at the first sync.
 *
 * A fetch again that fails (rc14 throws: the snapshot is a blob on the media host, whose download can fail)
 * leaves the version dropped but nothing fetched, until the collection's next server_sync: it is tried again
 * after RETRY_DELAY_MS, within the same bound.
 *
 * `watch` wraps the logger rc14 is given, so it must run before the socket exists; `attach` names the socket.
 */
export class AppStateRecovery {
  private socket: Socket | undefined;
  /** Runs a function outside the key transaction the warning came from (rc14 would take ours as nested in it). */
  private readonly outside = AsyncLocalStorage.snapshot();
  /** Collections being fetched again; true when what that fetch got did not match either (fetched once more after it). */
  private readonly pending = new Map<string, boolean>();
  private readonly recent = new Map<string, number[]>();

  constructor(
    private readonly logger: Logger,
    private readonly retryDelayMs = RETRY_DELAY_MS,
  ) {}

  /** The logger to give rc14: the same one, listening for MAC mismatches. */
  watch(baileys: Logger): Logger {
    const warn = baileys.warn.bind(baileys) as (...args: unknown[]) => void;
    (baileys as unknown as { warn: (...args: unknown[]) => void }).warn = (...args: unknown[]) => {
      const name = macMismatchOf(args[0], args[1]);
      if (name) this.mismatch(name);
      warn(...args);
    };
    return baileys;
  }

  attach(socket: Socket): void {
    this.socket = socket;
  }

  private mismatch(name: string, retry = false): void {
    if (!this.socket) return;
    if (this.pending.has(name)) {
      this.pending.set(name, true);
      return;
    }
    const now = Date.now();
    const times = (this.recent.get(name) ?? []).filter((at) => now - at < RECOVERY_WINDOW_MS);
    if (times.length >= MAX_RECOVERIES) {
      this.logger.warn(
        { collection: name },
        retry ? 'app state still could not be fetched again: not tried again for now' : 'app state does not match its MACs again: not fetched again for now',
      );
      return;
    }
    this.recent.set(name, [...times, now]);
    this.pending.set(name, false);
    this.outside(() => setImmediate(() => void this.recover(name)));
  }

  private async recover(name: string): Promise<void> {
    const socket = this.socket!;
    let failed = false;
    try {
      this.logger.warn({ collection: name }, 'app state did not match its MACs: fetching the collection again from its snapshot');
      const keys = socket.authState.keys;
      // rc14's sync holds this transaction (its key) while it decodes: ours waits until that one has stored its version.
      await keys.transaction(async () => {
        await keys.set({ 'app-state-sync-version': { [name]: null } });
      }, socket.authState.creds.me?.id ?? 'resync-app-state');
      await socket.resyncAppState([name as WAPatchName], false);
    } catch (error) {
      failed = true;
      this.logger.warn({ err: error, collection: name }, 'app state could not be fetched again');
    } finally {
      const again = this.pending.get(name) === true;
      this.pending.delete(name);
      if (again) this.mismatch(name);
      else if (failed) setTimeout(() => this.mismatch(name, true), this.retryDelayMs).unref();
    }
  }
}
