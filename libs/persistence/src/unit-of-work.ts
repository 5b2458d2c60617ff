import type { DataSource } from 'typeorm';
import { dataSourceOf, type Database, type Tx } from './tx';

/**
 * Where a `Tx` comes from for code outside libs/persistence (ADR 0036): one transaction around some
 * repositories' statements (each bound with `repository.within(tx)`), or the pool's handle for one that needs none. It adds nothing to
 * the DataSource's own transaction; it only keeps the ORM's types inside the library.
 */
export class UnitOfWork {
  private readonly dataSource: DataSource;

  constructor(database: Database) {
    this.dataSource = dataSourceOf(database);
  }

  /** The pool's handle: each statement on its own (autocommit); `repository.within(outside)` is the pool-bound repository. */
  get outside(): Tx {
    return this.dataSource.manager;
  }

  /** `work` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(work);
  }
}
