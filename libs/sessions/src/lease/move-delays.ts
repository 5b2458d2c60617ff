/** Instances whose moves a drain starts together. */
export const MOVES_AT_ONCE = 4;
/** The time between two steps of moves. */
export const MOVE_STEP_MS = 300;
/**
 * The steps span this long at most, however many instances a worker drains (ADR 0064). Up to 108 instances
 * the steps keep MOVE_STEP_MS (about 13 moves a second, shared by the heirs); beyond, they close up so that
 * the last move still starts 10 s before the drain's budget (18 s, ADR 0039) runs out.
 */
export const MOVES_SPREAD_MS = 8_000;

/**
 * When a drain starts each instance's move (hand-over), in ms from its first: a few at a time
 * (MOVES_AT_ONCE every MOVE_STEP_MS), the others serving until their turn. Moved all together, a worker's
 * instances arrived at their heirs together, and an heir opening 25 sockets at once opened the last of them
 * 3.5 s after its claim (bench/cluster run 34), while a send waits for its own instance's move only. The steps
 * run on a clock, not each when the previous moves end: a loaded worker whose moves took seconds each
 * drained in turns past its 25 s shutdown deadline (bench/cluster, load 9). They span MOVES_SPREAD_MS at most:
 * squeezed into 2 s, a drain of 100 handed each heir 25 instances a second, more than it opens without
 * saturating, and every adoption waited for all the others (ADR 0064).
 */
export function moveDelays(instances: number): number[] {
  const steps = Math.ceil(instances / MOVES_AT_ONCE);
  const stepMs = steps > 1 ? Math.min(MOVE_STEP_MS, MOVES_SPREAD_MS / (steps - 1)) : 0;
  return Array.from({ length: instances }, (_, index) => Math.round(Math.floor(index / MOVES_AT_ONCE) * stepMs));
}
