import { outboundMessageRow } from '@gw/persistence';
import type { Bus, BusSubscription } from '@gw/bus';
import { Subjects, type OutboxNotice, type QueueNotice, type SendRequest } from '@gw/contracts';
import { CampaignRepository, type NewCampaign } from '@gw/persistence';
import { LoopWaker, type Logger } from '@gw/platform';

export interface CampaignSchedulerConfig {
  /** How often due folders are looked at (completions of released sends are seen at this pace too). */
  pollIntervalMs: number;
  /** Folders stepped per poll. */
  batch: number;
}

export const CAMPAIGN_SCHEDULER_DEFAULTS: CampaignSchedulerConfig = { pollIntervalMs: 500, batch: 200 };

export interface CampaignSpec {
  id: string;
  name: string;
  info: string;
  scheduledFor: Date;
  delayMin: number;
  delayMax: number;
}

/**
 * Accepts a campaign: every message `Queued` (with `record.sendFolderId` = the folder) before the answer.
 * `campaigns`: the process's CampaignRepository.
 */
export async function createCampaign(
  campaigns: CampaignRepository,
  spec: CampaignSpec,
  requests: SendRequest[],
  owner: string,
  instanceId: string,
): Promise<void> {
  const campaign: NewCampaign = {
    ...spec,
    instanceId,
    messages: requests.map((request) => {
      const stamped: SendRequest = { ...request, record: { ...request.record, sendFolderId: spec.id } };
      return { message: outboundMessageRow(stamped, owner, 'Queued'), request: stamped };
    }),
  };
  await campaigns.create(campaign);
}

/** The campaign schedulers' queue group for queue notices: each notice wakes one scheduler. */
export const CAMPAIGN_WAKE_QUEUE = 'dispatcher.campaigns';

/**
 * Releases campaign messages into the async send queue: per folder one at a time, after its start
 * time, with the folder's random gap (delayMin..delayMax s) after the previous one finished, skipping
 * paused folders. State is in Postgres (CampaignRepository.tick); any number of schedulers may run.
 */
export class CampaignScheduler {
  private running = false;
  private loopDone?: Promise<void>;
  private readonly waker = new LoopWaker();
  private subscription?: BusSubscription;

  constructor(
    private readonly campaigns: CampaignRepository,
    private readonly bus: Bus,
    private readonly config: CampaignSchedulerConfig,
    private readonly logger: Logger,
  ) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    // A campaign's change (a folder created, resumed or deleted) may let a folder move on: look sooner. Only notices
    // marked `campaigns`: a plain async send's cannot (the folders' own sends are followed by the poll), and every
    // one of them made a look at the due folders. One scheduler per notice (a queue group): every scheduler looked at
    // the due folders on every notice, for the same answer.
    this.subscription = this.bus.subscribe(
      Subjects.queueWildcard,
      (data) => {
        if ((data as Partial<QueueNotice> | null)?.campaigns === true) this.poke();
        return undefined;
      },
      { queue: CAMPAIGN_WAKE_QUEUE },
    );
    this.loopDone = this.loop();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.subscription?.unsubscribe();
    this.waker.halt();
    await this.loopDone;
  }

  poke(): void {
    this.waker.wake();
  }

  /** One pass over the due folders; true when something was released. */
  async runOnce(): Promise<boolean> {
    let released = false;
    for (const folderId of await this.campaigns.dueFolders(this.config.batch)) {
      const step = await this.campaigns.tick(folderId);
      if (!step) continue;
      if (step.lastEventId) this.publish(Subjects.outbox(step.instanceId), { instanceId: step.instanceId, lastId: step.lastEventId } satisfies OutboxNotice);
      if (step.released) {
        released = true;
        this.publish(Subjects.queue(step.instanceId), { instanceId: step.instanceId } satisfies QueueNotice);
      }
    }
    return released;
  }

  private async loop(): Promise<void> {
    while (this.running) {
      this.waker.begin();
      let failed = false;
      try {
        await this.runOnce();
      } catch (error) {
        failed = true;
        this.logger.error({ err: error }, 'campaign scheduler step failed');
      }
      if (!this.running) break;
      // Queue notices keep coming while the database is down: wait before the next pass, whatever wakes.
      if (failed) {
        await this.waker.backoff(this.config.pollIntervalMs);
        continue;
      }
      this.waker.succeeded();
      await this.waker.sleep(this.config.pollIntervalMs);
    }
  }

  private publish(subject: string, data: unknown): void {
    try {
      this.bus.publish(subject, data);
    } catch {
      // Slow polls pick it up.
    }
  }
}
