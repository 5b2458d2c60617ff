import type { DataSource, EntityManager } from 'typeorm';
import { isStalePlan, PREPARED, preparedStatements } from './preparing-client';

/** The pg client under a TypeORM query runner: a text-only query may hold several statements (then it answers an array of results). */
interface PipelineClient {
  query(config: string | { name?: string; text: string; values: unknown[] }): Promise<unknown>;
  escapeLiteral(value: string): string;
}

/** The socket under a pg client (pg corks it around each statement's messages; a cork held outside holds them too). */
interface CorkableStream {
  cork(): void;
  uncork(): void;
}

function streamOf(client: PipelineClient): CorkableStream | null {
  const stream = (client as { connection?: { stream?: Partial<CorkableStream> } }).connection?.stream;
  return typeof stream?.cork === 'function' && typeof stream.uncork === 'function' ? (stream as CorkableStream) : null;
}

/**
 * Submits `first` on `client` and holds its write until the next statement the client submits, which
 * then leaves with it in one write (or until the next turn of the event loop, when none comes sooner, or
 * release()). Each write to Postgres is a system call and wakes its backend: at one send at a time the
 * worker's socket writes (Postgres', the phone's, NATS') were a fifth of its CPU (bench/send `--concurrency 1`,
 * docs/bench/send.md, session 59; ADR 0068).
 */
function withNextStatement<T>(client: PipelineClient, first: () => T): { submitted: T; release(): void } {
  const stream = streamOf(client);
  if (!stream) return { submitted: first(), release: () => undefined };
  stream.cork();
  let submitted: T;
  try {
    submitted = first();
  } catch (error) {
    stream.uncork();
    throw error;
  }
  const own = Object.prototype.hasOwnProperty.call(client, 'query');
  const query = client.query;
  let held = true;
  const release = () => {
    if (!held) return;
    held = false;
    clearImmediate(immediate);
    if (own) client.query = query;
    else delete (client as { query?: unknown }).query;
    stream.uncork();
  };
  const immediate = setImmediate(release);
  client.query = function (this: PipelineClient, ...call: Parameters<PipelineClient['query']>) {
    try {
      return query.apply(this, call);
    } finally {
      release();
    }
  };
  return { submitted, release };
}

/**
 * The last statement of a transaction, written together with its COMMIT (the outbox insert of the
 * events of a fenced transaction's writes). `rows` receives its rows once the transaction committed.
 */
export interface TailStatement {
  text: string;
  values: unknown[];
  rows?: (rows: unknown[]) => void;
}

/**
 * One transaction on its own connection, in two round trips fewer than awaiting each statement
 * (ADR 0023). `head` (a simple-query batch starting with START TRANSACTION: the lease proof of a fenced
 * transaction, its values as escaped literals) is written and `run` starts at once, its first
 * statement right behind the head on the same connection (pg's pipeline mode; queued by pg with
 * `DATABASE_PIPELINE=false`), so the server has run the head before any of it; `answered` settles with
 * the rows of the head's last statement. Then `tail`'s statement and the COMMIT are written together.
 * When the tail fails, the server ends the aborted transaction with a rollback in answer to the COMMIT,
 * and the tail's error is thrown; a prepared tail whose plan went stale is not tried again (it would run
 * after the COMMIT, outside the transaction): its text is named afresh for the next transaction.
 * On any error the transaction is rolled back (a failed head's error is thrown: it is the cause of the
 * errors behind it) and the connection goes back to the pool outside any transaction.
 *
 * Why the head may go out before its answer: START TRANSACTION fails only on a connection that is
 * broken or inside an aborted transaction, and the statements behind it fail there too.
 */
export async function pipelinedTransaction<T>(
  dataSource: DataSource,
  head: (client: PipelineClient) => string,
  run: (manager: EntityManager, answered: Promise<unknown[]>) => Promise<T>,
  tail?: (value: T) => TailStatement | null,
): Promise<T> {
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  const client = (runner as unknown as { databaseConnection: PipelineClient }).databaseConnection;
  // Open from the start: a batch that fails after its START TRANSACTION leaves the transaction open
  // (aborted), and the connection must not go back to the pool that way.
  let open = true;
  // The head goes out with the work's first statement, in one write.
  const heldHead = withNextStatement(client, () => client.query(head(client)) as Promise<{ rows: unknown[] } | Array<{ rows: unknown[] }>>);
  const answered = heldHead.submitted.then((results) => (Array.isArray(results) ? results[results.length - 1] : results).rows);
  // Read after the work, or never when the work fails first (then in the catch below).
  answered.catch(() => undefined);
  try {
    const value = await run(runner.manager, answered);
    await answered;
    const last = tail?.(value) ?? null;
    if (last) {
      const name = last.text.includes(PREPARED) ? preparedStatements.nameFor(last.text) : null;
      // Both written now, in this order, in one write.
      const stream = streamOf(client);
      stream?.cork();
      let rows: Promise<unknown[]>;
      let commit: Promise<unknown>;
      try {
        rows = (
          client.query(name ? { name, text: last.text, values: last.values } : { text: last.text, values: last.values }) as Promise<{ rows: unknown[] }>
        ).then(
          (result) => result.rows,
          (error: unknown) => {
            if (name && isStalePlan(error)) preparedStatements.renew(last.text);
            throw error;
          },
        );
        commit = client.query('COMMIT');
      } finally {
        stream?.uncork();
      }
      const [tailOutcome, commitOutcome] = await Promise.allSettled([rows, commit]);
      open = false;
      // The tail's error first: the COMMIT behind it rolled the transaction back (and answered ROLLBACK).
      if (tailOutcome.status === 'rejected') throw tailOutcome.reason;
      if (commitOutcome.status === 'rejected') throw commitOutcome.reason;
      last.rows?.(tailOutcome.value);
    } else {
      await runner.query('COMMIT');
      open = false;
    }
    return value;
  } catch (error) {
    if (open) await runner.query('ROLLBACK').catch(() => undefined);
    throw (
      (await answered.then(
        () => null,
        (headError: unknown) => headError,
      )) ?? error
    );
  } finally {
    heldHead.release();
    await runner.release();
  }
}

/** A plain transaction (TypeORM's `dataSource.transaction`) whose START TRANSACTION goes out with its first statement: one round trip fewer. */
export function transactionPipelined<T>(dataSource: DataSource, work: (manager: EntityManager) => Promise<T>): Promise<T> {
  return pipelinedTransaction(dataSource, () => 'START TRANSACTION', work);
}
