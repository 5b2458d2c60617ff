import type { InstanceRepository } from '@gw/persistence';
import type { Logger } from '@gw/platform';
import type { SessionStateWriter } from './session-state-writer';

/**
 * A worker killed during a pairing leaves the row `connecting` with a QR nobody can scan any more
 * (the credentials lived in its memory). Once that QR/code has expired and no worker holds the
 * instance, any worker marks it disconnected, as the dead worker's own expiry timer would have.
 */
export class AbandonedPairingSweeper {
  private timer: NodeJS.Timeout | undefined;
  private sweeping: Promise<number> | null = null;

  constructor(
    private readonly instances: InstanceRepository,
    private readonly writer: SessionStateWriter,
    private readonly logger: Logger,
    private readonly intervalMs: number,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.sweepNow(), this.intervalMs);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.sweeping;
  }

  /** One pass; returns how many pairings were ended. */
  sweepNow(): Promise<number> {
    this.sweeping ??= this.sweep().finally(() => (this.sweeping = null));
    return this.sweeping;
  }

  private async sweep(): Promise<number> {
    let ended = 0;
    try {
      for (const instanceId of await this.instances.findAbandonedPairings(50)) {
        if (await this.writer.expireAbandonedPairing(instanceId)) {
          ended += 1;
          this.logger.info({ instanceId }, 'ended a pairing abandoned by a dead worker');
        }
      }
    } catch (error) {
      this.logger.warn({ err: error }, 'sweeping abandoned pairings failed');
    }
    return ended;
  }
}
