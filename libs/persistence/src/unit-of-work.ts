import type { DataSource } from 'typeorm';
import type { Tx } from './tx';

/**
 * Where a `Tx` comes from for code outside libs/persistence (ADR 0036): one transaction around some
 * repositories' `*Within` statements, or the pool's handle for one that needs none. It adds nothing to
 * the DataSource's own transaction; it only keeps the ORM's types inside the library.
 */
export class UnitOfWork {
  constructor(private readonly dataSource: DataSource) {}

  /** Each statement on its own (autocommit), for a `*Within` method called outside a transaction. */
  get outside(): Tx {
    return this.dataSource.manager;
  }

  /** `work` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(work);
  }
}
