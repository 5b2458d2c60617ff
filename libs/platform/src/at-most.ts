/**
 * Runs `work` for each of `items`, at most `atOnce` at a time, in the items' order (each free slot takes the next).
 * Resolves once every item's work has finished; `work` is expected to handle its own failures (a rejection rejects
 * the whole, after the slots running then have finished their current item).
 */
export async function forEachAtMost<T>(items: readonly T[], atOnce: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const slot = async () => {
    while (next < items.length) await work(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(atOnce, items.length) }, slot));
}
