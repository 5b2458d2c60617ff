/**
 * Group commit for writes on the send path (ADR 0012: the send ledger's reserve and result, Signal key
 * writes; the async queue's accepts through EnqueueBatcher): writes that arrive while a statement is in
 * flight wait (for that statement's round trip, no timer) and go together in the next one, so
 * concurrent sends of every instance on the worker share one statement, one transaction and one WAL
 * flush. An idle worker writes a lone item at once.
 *
 * Every caller's promise settles only after the statement holding its item committed (or failed): the
 * durability of each write is unchanged. If a group's statement fails (a deadlock with another writer,
 * a value JSON cannot carry), nothing of it was written; each item is written again alone, in arrival
 * order, so one bad item fails only its own caller. Items with the same `key` never share a statement
 * (a repeat of a message id waits for the next one): a multi-row upsert may not touch a row twice.
 * An item never goes while an earlier item of its key is in a statement still in flight, so with a `key`
 * more than one statement may be in flight without reordering a key's items.
 * With a `key`, a group's statement carries its items sorted by key, so two statements that lock the
 * same rows (the results of two groups, or a group beside the inbound group's writes, which sort the
 * same way) lock them in one order and cannot deadlock each other.
 */
export interface GroupCommitOptions<I> {
  /** Items per statement at most. */
  maxBatch: number;
  /** Statements in flight at once (each on its own pooled connection). */
  maxInFlight: number;
  /** Items with equal keys go in different statements. */
  key?: (item: I) => string;
  /**
   * A statement in flight longer than `afterMs` (it waits for a row lock: an instance being deleted, a
   * lease being taken over) no longer counts against `maxInFlight`, so the items behind it, other keys',
   * go in a statement beside it; at most `maxInFlight` statements in flight in all. A writer keeps the
   * larger groups of one statement in flight on the hot path, and no head-of-line wait behind a stuck one.
   */
  slow?: { afterMs: number; maxInFlight: number };
}

/**
 * The send path's writers (Signal key writes, the send ledger): a statement is presumed to wait for a row
 * lock after 100 ms (they take 0.3-5 ms on a loaded machine), and then up to three more may go beside it.
 */
export const SLOW_STATEMENT = { afterMs: 100, maxInFlight: 4 };

interface Waiting<I, R> {
  item: I;
  resolve: (result: R) => void;
  reject: (error: unknown) => void;
}

export class GroupCommit<I, R> {
  private waiting: Array<Waiting<I, R>> = [];
  /** Statements written, items they carried (items / statements = the group size) and groups that fell back to one by one. */
  readonly stats = { statements: 0, items: 0, fallbacks: 0 };

  constructor(
    /** Writes many items in one statement; answers in the items' order. */
    private readonly writeMany: (items: I[]) => Promise<R[]>,
    /** Writes one item (a lone item, and the fallback when a group fails). */
    private readonly writeOne: (item: I) => Promise<R>,
    private readonly options: GroupCommitOptions<I>,
  ) {
    if (!(options.maxBatch >= 1) || !(options.maxInFlight >= 1)) throw new Error('GroupCommit: maxBatch and maxInFlight must be at least 1');
    if (options.slow && !(options.slow.afterMs > 0 && options.slow.maxInFlight >= options.maxInFlight))
      throw new Error('GroupCommit: slow.afterMs must be positive and slow.maxInFlight at least maxInFlight');
  }

  /** Resolves once the item is committed. */
  write(item: I): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    while (this.hasRoom() && this.waiting.length > 0) {
      const group = this.take();
      // Every item waiting has its key in a statement in flight: the end of that one pumps again.
      if (group.length === 0) return;
      const keys = this.options.key ? group.map((entry) => this.options.key!(entry.item)) : [];
      for (const k of keys) this.keysInFlight.add(k);
      const started = { at: performance.now() };
      this.inFlight.add(started);
      void this.flush(group).finally(() => {
        for (const k of keys) this.keysInFlight.delete(k);
        this.inFlight.delete(started);
        this.pump();
      });
    }
    this.armSlowTimer();
  }

  /** The statements in flight, each with when it started (performance.now()). */
  private readonly inFlight = new Set<{ at: number }>();
  private slowTimer: NodeJS.Timeout | null = null;

  /** When the statements in flight younger than `slow.afterMs` started (those that count against maxInFlight). */
  private youngStarts(afterMs: number): number[] {
    const now = performance.now();
    return [...this.inFlight].map(({ at }) => at).filter((at) => now - at < afterMs);
  }

  /** Whether another statement may start: fewer than maxInFlight of the statements in flight are younger than `slow.afterMs`. */
  private hasRoom(): boolean {
    const slow = this.options.slow;
    if (!slow) return this.inFlight.size < this.options.maxInFlight;
    return this.inFlight.size < slow.maxInFlight && this.youngStarts(slow.afterMs).length < this.options.maxInFlight;
  }

  /** Items wait behind young statements only: look again when the oldest of them turns slow. */
  private armSlowTimer(): void {
    const slow = this.options.slow;
    if (!slow || this.slowTimer || this.waiting.length === 0 || this.inFlight.size >= slow.maxInFlight) return;
    const young = this.youngStarts(slow.afterMs);
    // None young (or none in flight): room comes only when one ends, which pumps again.
    if (young.length === 0) return;
    const delay = Math.max(0, Math.min(...young) + slow.afterMs - performance.now());
    this.slowTimer = setTimeout(() => {
      this.slowTimer = null;
      this.pump();
    }, delay + 1);
    this.slowTimer.unref?.();
  }

  /** Keys of the items in the statements in flight: an item with one of them waits for its statement to end. */
  private readonly keysInFlight = new Set<string>();

  /**
   * The next group: arrival order, at most maxBatch, no two items with the same key, and none whose key is in a
   * statement still in flight (so an item never overtakes an earlier one of its key, however many statements
   * are in flight, and a statement waiting on a lock holds back only its own items' keys).
   */
  private take(): Array<Waiting<I, R>> {
    const key = this.options.key;
    if (!key) return this.waiting.splice(0, this.options.maxBatch);
    const group: Array<Waiting<I, R>> = [];
    const rest: Array<Waiting<I, R>> = [];
    const keys = new Set<string>();
    for (const entry of this.waiting) {
      const k = key(entry.item);
      if (group.length < this.options.maxBatch && !keys.has(k) && !this.keysInFlight.has(k)) {
        keys.add(k);
        group.push(entry);
      } else {
        // A later item of a key already left out waits too: it must not overtake the first.
        keys.add(k);
        rest.push(entry);
      }
    }
    this.waiting = rest;
    return group;
  }

  private async flush(group: Array<Waiting<I, R>>): Promise<void> {
    this.stats.statements++;
    this.stats.items += group.length;
    if (group.length === 1) {
      await this.writeOne(group[0].item).then(group[0].resolve, group[0].reject);
      return;
    }
    const ordered = this.inKeyOrder(group);
    let results: R[];
    try {
      results = await this.writeMany(ordered.map((entry) => entry.item));
    } catch {
      this.stats.fallbacks++;
      for (const entry of group) await this.writeOne(entry.item).then(entry.resolve, entry.reject);
      return;
    }
    ordered.forEach((entry, index) => entry.resolve(results[index]));
  }

  /** The group sorted by key (code-unit order, as `compareKeys`), or as it is without a key. */
  private inKeyOrder(group: Array<Waiting<I, R>>): Array<Waiting<I, R>> {
    const key = this.options.key;
    if (!key) return group;
    return group
      .map((entry) => ({ entry, k: key(entry.item) }))
      .sort((a, b) => compareKeys(a.k, b.k))
      .map(({ entry }) => entry);
  }
}

/** The one order of row keys every grouped writer uses (plain code-unit order). */
export function compareKeys(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
