import { PREPARED } from '../preparing-client';
import type { Lease } from './lease.repository';

/*
 * The lease's fence inside one statement (a CTE), for the fenced writes of the session worker's
 * repositories (auth state, instance status, the send ledger): LeaseRepository's fenced transactions
 * prove a lease with a statement of their own, these within the write's.
 */

/**
 * The same proof for a write that is one statement: a CTE named `lease` (parameters `$first` = the
 * instance id, then the worker id and the fencing token). Gate every change in the statement with
 * `EXISTS (SELECT 1 FROM lease)` and select `(SELECT count(*) FROM lease)::int AS held` to tell
 * "fenced out" from "nothing matched". The statement runs in its own transaction, which holds the
 * lease row FOR KEY SHARE until it commits, exactly as LeaseRepository.holds() does for a multi-statement
 * transaction, but in one round trip instead of four (BEGIN, check, write, COMMIT).
 */
export function fenceCte(first: number): string {
  return `lease AS ( ${PREPARED}
         SELECT 1 FROM session_leases
         WHERE instance_id = $${first} AND worker_id = $${first + 1} AND fencing_token = $${first + 2}
         FOR KEY SHARE)`;
}

export function fenceParams(lease: Lease): [string, string, string] {
  return [lease.instanceId, lease.workerId, lease.fencingToken];
}

/**
 * The fence of a statement that writes for many instances (group commit, ADR 0012): a CTE named
 * `lease` with the `instance_id` of every lease of $1 (instance ids), $2 (worker ids), $3 (fencing
 * tokens) that is still live, each row locked FOR KEY SHARE until the statement commits, as fenceCte()
 * does for one. Gate each row's change with `instance_id IN (SELECT instance_id FROM lease)` and
 * select `coalesce(array_agg(instance_id), '{}')` from it to tell which instances were held. The arrays are
 * read through scalar subqueries: a group's size, seen by the planner, made a plan for each call look cheaper
 * than the generic one, and a prepared group statement was planned again on every call.
 */
export function fenceManyCte(): string {
  return `lease AS (
         SELECT l.instance_id FROM session_leases l
         JOIN unnest((SELECT $1::text[]), (SELECT $2::text[]), (SELECT $3::bigint[])) AS f(instance_id, worker_id, fencing_token)
           ON l.instance_id = f.instance_id AND l.worker_id = f.worker_id AND l.fencing_token = f.fencing_token
         FOR KEY SHARE OF l)`;
}

/** The parameters of fenceManyCte(): each distinct lease once. */
export function fenceManyParams(leases: Lease[]): [string[], string[], string[]] {
  const distinct = new Map(leases.map((lease) => [`${lease.instanceId}\u0000${lease.workerId}\u0000${lease.fencingToken}`, lease]));
  const all = [...distinct.values()];
  return [all.map((lease) => lease.instanceId), all.map((lease) => lease.workerId), all.map((lease) => lease.fencingToken)];
}
