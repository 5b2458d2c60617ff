import { MEX_QUERIES, mexBadRequest, mexQueryOf } from '../src/mex-queries';

/** The simulator's one table of w:mex query ids (docs/protocol.md): what it answers, and what it refuses as the relay does. */
describe('w:mex query table', () => {
  it('should name each id once', () => {
    const ids = Object.values(MEX_QUERIES).map((query) => query.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it.each([
    ['6190824427689257', '2023 directory list (whatsmeow, WAHA)'],
    ['6802402206520139', '2023 directory search (WAHA)'],
    ['26278681041745438', 'Android admin invite'],
    ['24369392486051948', 'Android admin invite revoke'],
    ['24934958956134858', 'Android admin invite accept'],
    ['123', 'a guess'],
  ])('should know no query %s (%s): the relay answers it Bad Request', (id) => {
    expect(mexQueryOf(id)).toBeUndefined();
    expect(mexBadRequest()).toEqual({
      data: null,
      errors: [{ message: 'Bad Request', path: [], extensions: { error_code: 400, severity: 'CRITICAL', is_retryable: false } }],
    });
  });

  it('should take the variables WA Web sends and refuse the 2023 and partial shapes', () => {
    const list = MEX_QUERIES[mexQueryOf('26125047313831973') as 'DIRECTORY_LIST'].check;
    expect(
      list({ input: { view: 'RECOMMENDED', filters: { country_codes: ['BR'], categories: [] }, limit: 5 }, fetch_status_metadata: false }),
    ).toBeUndefined();
    expect(list({ input: { view: 'RECOMMENDED', filters: { country_codes: ['BR'] }, limit: 5, start_cursor: null } })).toBeDefined();
    const search = MEX_QUERIES.DIRECTORY_SEARCH.check;
    expect(search({ input: { search_text: 'x', categories: [], limit: 5, start_cursor: 'C' }, fetch_status_metadata: false })).toBeUndefined();
    expect(search({ input: { search_text: 'x', limit: 5 }, fetch_status_metadata: false })).toBeDefined();
    const invite = MEX_QUERIES.ADMIN_INVITE.check;
    expect(invite({ newsletter_id: '1@newsletter', user_id: '99@lid' })).toBeUndefined();
    expect(invite({ newsletter_id: '1@newsletter', user_id: '5511999999999@s.whatsapp.net' })).toBe('user_id must be a LID');
    expect(MEX_QUERIES.SUBSCRIBED.check({})).toBeUndefined();
    expect(MEX_QUERIES.SUBSCRIBED.check({ input: {} })).toBeDefined();
    expect(MEX_QUERIES.ADMIN_INVITE_ACCEPT.check({ newsletter_id: 'x' })).toBeDefined();
  });
});
