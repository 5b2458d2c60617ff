import type { DeliveryClaim, WebhookRow } from '@gw/persistence';

/** Deliveries of one lane, claimed together; sent strictly one after the other. */
export interface LaneRun {
  webhook: WebhookRow;
  claims: DeliveryClaim[];
  /** Nothing of the run is sent after this (local time): the claim could lapse mid-request. */
  sendBy: number;
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
