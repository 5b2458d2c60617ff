import type { DataSource, EntityManager } from 'typeorm';

/**
 * The handle of one unit of work: a transaction's, or the pool's outside one (ADR 0036). Code outside
 * libs/persistence only holds it and hands it to a repository's `*Within` method, so the statements
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
 * `PersistenceModule.forDataSource` and to repositories' constructors, and closes it (`destroy()`) when it
 * stops. Outside libs/persistence it is held and passed on, never queried: statements go through
 * repositories. For now it is the ORM's DataSource under the library's own name; narrowing it to an
 * opaque handle (as `Tx` is) needs every repository constructor, LeaseRepository's too, to take it.
 */
export type Database = DataSource;
