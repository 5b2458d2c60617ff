import type { DeliveryClaim, WebhookRow } from '@gw/persistence';

/** Deliveries of one lane, claimed together; sent strictly one after the other. */
export interface LaneRun {
  webhook: WebhookRow;
  /** In lane order. A fan-out that claims (ADR 0046) may add to it until it has ended. */
  claims: DeliveryClaim[];
  /** Each claim's deadline (local time): it is not sent after this, the claim could lapse mid-request. */
  sendBy: number[];
  /** The lane's key (laneKey). */
  lane: string;
  /** The event id of its last claim. */
  lastEventId: string;
  /** Set when its sending stopped: nothing is added to it after. */
  ended?: boolean;
  /** Ended with every claim sent and delivered: the lane holds nothing of this relay's that is not delivered. */
  ok?: boolean;
  /**
   * Its lane may have pending rows behind it that are not its own: a claim's run (cut at the run length), or a
   * fan-out's run once a fan-out left a row of its lane pending. Only then does its last success ask the flush
   * to claim the lane on (which reads the lane's rows from its head: every row of a fan-out's run is its own).
   */
  mayHaveMore: boolean;
}

/** A lane's key: its webhook, instance and chat ('' for a broker sink's, one lane per instance). */
export function laneKey(webhookId: string, instanceId: string, laneChatId: string): string {
  return `${webhookId}\u0000${instanceId}\u0000${laneChatId}`;
}

/** The lane's chat of a delivery: the event's for a webhook, '' for a broker sink. */
export function laneChatOf(webhook: Pick<WebhookRow, 'kind'>, chatId: string): string {
  return webhook.kind === 'webhook' || !webhook.kind ? chatId : '';
}

/** One receiver (URL origin): its runs waiting for a slot, and how many it has in progress. */
export interface Receiver {
  waiting: LaneRun[];
  /** Runs being sent: at most `maxInFlightPerReceiver`, so at most that many requests at once. */
  active: number;
  /** Deliveries claimed for it and not sent yet (in waiting runs or further on in active ones). */
  claimed: number;
}

/** Claims grouped by the lane head they were claimed behind, each group in lane order. */
export function groupByLane(claims: DeliveryClaim[]): DeliveryClaim[][] {
  const lanes = new Map<string, DeliveryClaim[]>();
  for (const claim of claims) {
    let lane = lanes.get(claim.headId);
    if (!lane) lanes.set(claim.headId, (lane = []));
    lane.push(claim);
  }
  return [...lanes.values()].map((lane) => lane.sort((a, b) => a.position - b.position));
}
