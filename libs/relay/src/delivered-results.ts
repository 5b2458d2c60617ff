import type { ClaimOptions, DeliveredResult, DeliveryClaim, DeliveryRepository } from '@gw/persistence';
import type { Logger } from '@gw/platform';

/** How long successes gather before they are written together (lanes move on once written). */
const FLUSH_DELAY_MS = 5;

/**
 * Claiming the next run of the lanes a flush moves on, in the flush's own statement
 * (DeliveryRepository.markDeliveredAndClaimNext): those lanes wait for no claim pass of their own.
 */
export interface LaneContinuation {
  /** What to claim with this flush; null (the relay stopping): record only. */
  options(): { limit: number; claimMs: number; claim: ClaimOptions } | null;
  /** The claims the flush made (none is possible), claimed at `claimedAt` (local time, before the statement). Never throws. */
  claimed(claims: DeliveryClaim[], claimedAt: number): Promise<void>;
}

/**
 * Successes not yet recorded, and the flush recording them (one at a time): everything that succeeded
 * within FLUSH_DELAY_MS goes into one statement. `onRecorded` is told the receivers whose lanes moved on, and
 * whether the flush's own claim may have left some of them unclaimed (it was full, or there was none).
 */
export class DeliveredResults {
  private delivered: DeliveredResult[] = [];
  /** The receivers of those successes. */
  private readonly deliveredFor = new Set<string>();
  private flushScheduled = false;
  private flushing?: Promise<void>;

  constructor(
    private readonly deliveries: DeliveryRepository,
    private readonly logger: Logger,
    private readonly onRecorded: (origins: string[], limited: boolean) => void,
    private readonly continuation?: LaneContinuation,
  ) {}

  record(result: DeliveredResult, origin: string): void {
    this.delivered.push(result);
    this.deliveredFor.add(origin);
    this.scheduleFlush();
  }

  /** Everything that succeeded within a few milliseconds goes into one statement. */
  private scheduleFlush(): void {
    if (this.flushScheduled || this.flushing) return;
    this.flushScheduled = true;
    setTimeout(() => {
      this.flushScheduled = false;
      this.flushing = this.flush().finally(() => {
        this.flushing = undefined;
        if (this.delivered.length > 0) this.scheduleFlush();
      });
    }, FLUSH_DELAY_MS);
  }

  private async flush(): Promise<void> {
    const batch = this.delivered.splice(0);
    const origins = [...this.deliveredFor];
    this.deliveredFor.clear();
    if (batch.length === 0) return;
    let claims: DeliveryClaim[] = [];
    const claimedAt = Date.now();
    const next = this.continuation?.options() ?? null;
    try {
      if (next) claims = await this.deliveries.markDeliveredAndClaimNext(batch, next.limit, next.claimMs, next.claim);
      else await this.deliveries.markDelivered(batch);
    } catch (error) {
      // Kept for the next flush; if this process dies first, the claims lapse and they go out again.
      this.delivered.unshift(...batch);
      for (const origin of origins) this.deliveredFor.add(origin);
      this.logger.error({ err: error, count: batch.length }, 'recording delivered webhooks failed');
      await new Promise((resolve) => setTimeout(resolve, 250));
      return;
    }
    if (claims.length > 0) await this.continuation?.claimed(claims, claimedAt);
    // Their lanes moved on, and were claimed on here unless the claim was full (or none was made: the relay stopping).
    this.onRecorded(origins, next === null || claims.length >= next.limit);
  }

  /** At stop: waits for the flush in progress, then records what is left (a few tries). */
  async drain(): Promise<void> {
    for (let tries = 0; tries < 5 && (this.flushing || this.flushScheduled || this.delivered.length > 0); tries++) {
      await this.flushing;
      await this.flush();
    }
  }
}
