/** SQLSTATE classes and codes that say "no database to talk to now", not "this statement is wrong". */
const UNAVAILABLE_SQLSTATES = /^(08|57P0[1-3]$|25006$|53300$)/;
/** What pg and Node say when a connection dies or cannot be opened (no SQLSTATE then). */
const UNAVAILABLE_MESSAGES =
  /^(Connection terminated|connect (ECONNREFUSED|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH)|read ECONNRESET|write (EPIPE|ECONNRESET)|timeout exceeded when trying to connect|Client has encountered a connection error|Client was closed and is not queryable)/;
const UNAVAILABLE_ERRNOS = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH']);

/**
 * Postgres gone or changing hands (a failover: the primary killed, its connections cut, none to
 * open, the standby not yet promoted or still read-only, issue #39): the same statement succeeds once
 * the database is back, so a writer that must not lose it waits and tries again. Anything else (a
 * constraint, a bug in the statement) fails the same way every time. A pg error carries its SQLSTATE in
 * `code` (TypeORM's QueryFailedError copies it, and keeps the original as `driverError`); a connection
 * that dies or cannot be opened has only its message or its errno.
 */
export function databaseUnavailable(error: unknown): boolean {
  const candidate = error as { code?: unknown; message?: unknown; driverError?: { code?: unknown; message?: unknown } } | null;
  if (!candidate || typeof candidate !== 'object') return false;
  for (const one of [candidate, candidate.driverError]) {
    if (typeof one?.code === 'string' && (UNAVAILABLE_SQLSTATES.test(one.code) || UNAVAILABLE_ERRNOS.has(one.code))) return true;
    if (typeof one?.message === 'string' && UNAVAILABLE_MESSAGES.test(one.message)) return true;
  }
  return false;
}
