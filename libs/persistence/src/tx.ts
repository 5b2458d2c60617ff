import type { DataSource, EntityManager } from 'typeorm';

/**
 * The handle of one unit of work: a transaction's, or the pool's outside one (ADR 0036). Code outside
 * libs/persistence only holds it and binds a repository to it (`repository.within(tx)`), so the statements
 * share the transaction; it cannot run a statement itself, and it never needs to import the ORM.
 *
 * It is the ORM's entity manager seen from outside: a supertype that shows nothing but the ORM's own
 * marker, so a manager a transaction callback receives is a `Tx` as it is, with no cast, and nothing
 * outside persistence can reach through it.
 */
export type Tx = Pick<EntityManager, '@instanceof'>;

/** The entity manager behind a handle, for the repositories alone (not exported from the library). */
export function managerOf(tx: Tx): EntityManager {
  return tx as EntityManager;
}

/**
 * The pool a runtime opened with `openDatabase` and owns (ADR 0036): it hands it to
 * `PersistenceModule.forDataSource`, to repositories' constructors and to LeaseRepository's fenced
 * transactions, and closes it (`destroy()`) when it stops. Opaque as `Tx` is: the ORM's DataSource seen
 * from outside, showing its marker and `destroy` alone, so code holding one cannot run a statement with
 * it (statements go through repositories). A DataSource is a `Database` as it is, with no cast.
 */
export type Database = Pick<DataSource, '@instanceof' | 'destroy'>;

/** The DataSource behind a handle, for the library alone (not exported from it). */
export function dataSourceOf(database: Database): DataSource {
  return database as DataSource;
}
