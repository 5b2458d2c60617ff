import type { HistoryRequest } from '@gw/contracts';

/**
 * `history_days` of connect (spec, five rules): absent → 90 days of normal history; 1–90 → N days,
 * normal; 91–365 → N days, full; 0 → 365 days, full; anything outside 0–365 is ignored → 90.
 */
export function historyRequest(historyDays: unknown): HistoryRequest {
  if (typeof historyDays !== 'number' || !Number.isInteger(historyDays) || historyDays < 0 || historyDays > 365) {
    return { days: 90, fullSync: false };
  }
  if (historyDays === 0) return { days: 365, fullSync: true };
  return { days: historyDays, fullSync: historyDays > 90 };
}

/** Delay settings: negatives become 0; a max below min becomes min. */
export function normaliseDelays(min: number, max: number): { min: number; max: number } {
  const low = Math.max(0, Math.trunc(min));
  const high = Math.max(0, Math.trunc(max));
  return { min: low, max: Math.max(low, high) };
}
