import { FencedOutError } from '@gw/persistence';
import type { SessionState } from './session-state';
import type { SocketSlot } from './socket-slot';

/** What an ending needs from the rest of the Session. */
export interface EndingHooks {
  /** Stops what would run later: the pairing's expiry, a reconnect waiting for its delay or the gate. */
  stopTimers(): void;
  /** Tells the owner the session is over; `release` is false when the lease was lost (nothing may be written). */
  ended(outcome: { release: boolean }): Promise<void>;
}

/**
 * How a session stops: ended on purpose (logged out, stopped disconnected or hibernated, or adopted
 * with nothing stored) with its row saying why, or aborted without a write when the lease is gone.
 */
export class SessionEndings {
  constructor(
    private readonly state: SessionState,
    private readonly slot: SocketSlot,
    private readonly hooks: EndingHooks,
  ) {}

  /**
   * The lease is gone (lost, fenced out, or the worker dies): stop everything at once and write
   * nothing, not even through tasks still queued. Synchronous on purpose.
   */
  abort(reason: string, options: { hard?: boolean } = {}): void {
    const { state } = this;
    if (state.phase === 'ended') return;
    state.logger.warn({ reason }, 'session aborted without writing');
    state.phase = 'ended';
    this.hooks.stopTimers();
    state.auth?.close();
    this.slot.detach(options.hard);
    state.changed.notify();
    void this.hooks.ended({ release: false }).catch((error: unknown) => state.logger.error({ err: error }, 'ending aborted session failed'));
  }

  /** 401: the device is unlinked. Credentials go first (fenced), then the row says why. */
  async loggedOut(reason: string): Promise<void> {
    const { state } = this;
    this.slot.detach();
    // No key write of the dead socket may land after the wipe.
    await state.auth?.closeAndDrain();
    try {
      await state.guardFencing(() => state.services.authStates.clearFenced(state.lease));
    } catch (error) {
      if (error instanceof FencedOutError) throw error;
      // Left behind, they are harmless: `paired` goes false, and the next pairing replaces them.
      state.logger.error({ err: error }, 'clearing credentials after logout failed');
    }
    await state.write({
      patch: {
        status: 'disconnected',
        paired: false,
        desiredState: 'disconnected',
        qrcode: '',
        paircode: '',
        pairingExpiresAt: null,
        lastDisconnect: new Date(),
        lastDisconnectReason: reason,
      },
      event: { type: 'LoggedOut' },
    });
    await this.end(true);
  }

  /** Ends on purpose and stays disconnected (or hibernated; nobody adopts it): credentials are kept. */
  async stopDisconnected(reason: string, status: 'disconnected' | 'hibernated' = 'disconnected'): Promise<void> {
    this.slot.detach();
    await this.state.write({
      patch: {
        status,
        desiredState: 'disconnected',
        qrcode: '',
        paircode: '',
        pairingExpiresAt: null,
        lastDisconnect: new Date(),
        lastDisconnectReason: reason,
      },
      event: {},
    });
    await this.end(true);
  }

  /** Adopted but nothing stored: the `paired` flag was stale. Correct it and let go. */
  async forgetUnpairedDevice(): Promise<void> {
    await this.state.write({ patch: { status: 'disconnected', paired: false, desiredState: 'disconnected', qrcode: '', paircode: '' }, event: {} });
    await this.end(true);
  }

  async end(release: boolean): Promise<void> {
    const { state } = this;
    if (state.phase === 'ended') return;
    state.phase = 'ended';
    this.hooks.stopTimers();
    this.slot.detach();
    state.auth?.close();
    state.changed.notify();
    await this.hooks.ended({ release });
  }
}
