import type { DataSource, EntityManager } from 'typeorm';
import { dataSourceOf, managerOf, type Database, type Tx } from '../tx';

/**
 * What a repository's statements run on: the pool (the DataSource: each statement on its own) or a
 * transaction's entity manager. Both answer `query` and `getRepository` alike.
 */
export type Executor = Pick<EntityManager, 'query' | 'getRepository'>;

/**
 * The one shape of a repository (ADR 0036, follow-up): its methods are instance methods, and each runs
 * its statements on the repository's executor, `db`. The repository a runtime builds (one per process,
 * PersistenceModule's) runs on the pool: each statement on its own, and a method that needs a
 * transaction opens one. The same repository `within(tx)` runs inside the caller's transaction: every
 * statement in it, and a method that would open a transaction joins it instead.
 */
export abstract class RepositoryBase {
  /** Where this repository's statements run: the pool, or the transaction's manager after `within`. */
  protected readonly db: Executor;

  /** The pool this repository was built on (a method that opens a transaction or a connection of its own uses it). */
  protected readonly dataSource: DataSource;

  constructor(database: Database) {
    this.dataSource = dataSourceOf(database);
    this.db = this.dataSource;
  }

  /**
   * This repository with its statements inside `tx` (a transaction's handle; `UnitOfWork.outside`, the
   * pool's, gives the pool-bound one). Cheap: one small object on top of this one, holding the handle;
   * no statement, no copy.
   */
  within(tx: Tx): this {
    const manager = managerOf(tx);
    const bound = Object.create(this) as this;
    (bound as unknown as { db: Executor }).db = manager === this.dataSource.manager ? this.dataSource : manager;
    return bound;
  }

  /** `other` (another repository of the library) with its statements where this one's run. */
  protected alongside<R extends RepositoryBase>(other: R): R {
    if (this.db === this.dataSource) return other;
    const bound = Object.create(other) as R;
    (bound as unknown as { db: Executor }).db = this.db;
    return bound;
  }

  /**
   * `work` in a transaction: one of its own on the pool (committed when it resolves, rolled back when it
   * throws), or, bound `within` a transaction, that one (no savepoint, no extra statement).
   */
  protected transaction<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.db === this.dataSource ? this.dataSource.transaction(work) : work(this.db as EntityManager);
  }
}
