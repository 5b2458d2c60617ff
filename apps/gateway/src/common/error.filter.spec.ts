import { QueryFailedError } from 'typeorm';
import { databaseUnavailable, toApiError } from './error.filter';

const request = { method: 'POST', url: '/send/text' };

describe('toApiError', () => {
  describe('a database that is gone or changing hands', () => {
    const cases: Array<[string, unknown]> = [
      ['a connection cut under a query', new Error('Connection terminated unexpectedly')],
      ['a connection that cannot be opened', Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })],
      ['the pool waiting in vain for a connection', new Error('timeout exceeded when trying to connect')],
      [
        'the server shutting down (57P01)',
        new QueryFailedError('SELECT 1', [], Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' })),
      ],
      ['a crash of the server (57P02)', Object.assign(new Error('terminating connection due to unexpected postmaster exit'), { code: '57P02' })],
      [
        'a standby not yet promoted (25006)',
        new QueryFailedError('INSERT', [], Object.assign(new Error('cannot execute INSERT in a read-only transaction'), { code: '25006' })),
      ],
      ['a connection exception (08006)', Object.assign(new Error('connection failure'), { code: '08006' })],
    ];

    it.each(cases)('should answer 503 with Retry-After for %s', (_name, error) => {
      expect(databaseUnavailable(error)).toBe(true);
      const answer = toApiError(error, request);
      expect(answer.status).toBe(503);
      expect(answer.kind).toBe('unavailable');
      expect(answer.body()).toEqual(expect.objectContaining({ error: 'Database unavailable, try again' }));
    });
  });

  it('should keep a bug a 500 that says nothing internal', () => {
    const error = new QueryFailedError('SELECT', [], Object.assign(new Error('column "x" does not exist'), { code: '42703' }));
    expect(databaseUnavailable(error)).toBe(false);
    expect(toApiError(error, request).status).toBe(500);
    expect(toApiError(new TypeError('undefined is not a function'), request).status).toBe(500);
    expect(toApiError(null, request).status).toBe(500);
  });
});
