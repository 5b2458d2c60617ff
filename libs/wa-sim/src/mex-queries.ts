// The `w:mex` GraphQL queries the simulator answers: ONE table, each id taken from a reference (not from the
// gateway), with the variables that reference sends. An id not in the table (a retired one, another platform's,
// a guess) and variables that do not fit are answered as WhatsApp's relay answers a request it refuses: the
// `Bad Request` GraphQL error, code 400 (the body quoted in Auties00/Cobalt#539 and oxidezap/whatsapp-rust#1372;
// no public source shows another answer for an unknown persisted-query id). Checked 2026-12-02; docs/protocol.md
// keeps the same references.

type Variables = Record<string, unknown>;
/** Why the variables do not fit the query, or undefined when they do. */
type Check = (variables: Variables) => string | undefined;

export interface MexQuery {
  id: string;
  /** The `data` field the answer is under. */
  path: string;
  /** Where the id and its variables are read from. */
  reference: string;
  check: Check;
}

const record = (value: unknown): Variables | undefined => (value && typeof value === 'object' && !Array.isArray(value) ? (value as Variables) : undefined);
const isString = (value: unknown): value is string => typeof value === 'string' && value.length > 0;
const stringArray = (value: unknown): boolean => Array.isArray(value) && value.every((entry) => typeof entry === 'string');

/** Every check in turn; the first failure wins. */
const all =
  (...checks: Check[]): Check =>
  (variables) => {
    for (const check of checks) {
      const failed = check(variables);
      if (failed) return failed;
    }
    return undefined;
  };
const newsletterId: Check = (v) => (isString(v.newsletter_id) && v.newsletter_id.endsWith('@newsletter') ? undefined : 'newsletter_id must be a channel JID');
const userId: Check = (v) => (isString(v.user_id) && v.user_id.includes('@') ? undefined : 'user_id must be a JID');
/** WA Web names channel admins by LID (WAWebMexCreateNewsletterAdminInviteJob converts with toUserLidOrThrow). */
const userLid: Check = (v) => (isString(v.user_id) && v.user_id.endsWith('@lid') ? undefined : 'user_id must be a LID');
const only =
  (...keys: string[]): Check =>
  (v) => {
    const extra = Object.keys(v).filter((key) => !keys.includes(key));
    return extra.length ? `unexpected variables ${extra.join(', ')}` : undefined;
  };
const fetchStatusMetadata: Check = (v) => (typeof v.fetch_status_metadata === 'boolean' ? undefined : 'fetch_status_metadata must be a boolean');
const page = (input: Variables): string | undefined =>
  !Number.isInteger(input.limit) || (input.limit as number) < 1
    ? 'input.limit must be a positive whole number'
    : input.start_cursor !== undefined && input.start_cursor !== null && typeof input.start_cursor !== 'string'
      ? 'input.start_cursor must be a string'
      : undefined;

const RC14 = 'rc14 QueryIds (lib/Types/Mex.js) and its Socket/newsletter.js variables';

/** The table. Keys name the query; `id` is what travels. */
export const MEX_QUERIES = {
  CREATE: {
    id: '8823471724422422',
    path: 'xwa2_newsletter_create',
    reference: RC14,
    check: (v) => (isString(record(v.input)?.name) ? undefined : 'input.name is required'),
  },
  METADATA: {
    id: '6563316087068696',
    path: 'xwa2_newsletter',
    reference: `${RC14}; whatsmeow newsletter.go:115`,
    check: (v) => {
      const input = record(v.input);
      return isString(input?.key) && (input.type === 'JID' || input.type === 'INVITE') ? undefined : 'input {key, type: JID|INVITE} is required';
    },
  },
  UPDATE_METADATA: {
    id: '24250201037901610',
    path: 'xwa2_newsletter_update',
    reference: `${RC14}; Cobalt UpdateNewsletterMexRequest; WAWebMexUpdateNewsletterJob`,
    check: all(newsletterId, (v) => (record(v.updates) ? undefined : 'updates is required')),
  },
  SUBSCRIBERS: { id: '9783111038412085', path: 'xwa2_newsletter_subscribers', reference: RC14, check: newsletterId },
  FOLLOW: { id: '24404358912487870', path: 'xwa2_newsletter_join_v2', reference: RC14, check: newsletterId },
  UNFOLLOW: { id: '9767147403369991', path: 'xwa2_newsletter_leave_v2', reference: RC14, check: newsletterId },
  MUTE: { id: '29766401636284406', path: 'xwa2_newsletter_mute_v2', reference: RC14, check: newsletterId },
  UNMUTE: { id: '9864994326891137', path: 'xwa2_newsletter_unmute_v2', reference: RC14, check: newsletterId },
  ADMIN_COUNT: { id: '7130823597031706', path: 'xwa2_newsletter_admin', reference: RC14, check: newsletterId },
  CHANGE_OWNER: { id: '7341777602580933', path: 'xwa2_newsletter_change_owner', reference: RC14, check: all(newsletterId, userId) },
  DEMOTE: { id: '6551828931592903', path: 'xwa2_newsletter_demote', reference: RC14, check: all(newsletterId, userId) },
  DELETE: { id: '30062808666639665', path: 'xwa2_newsletter_delete_v2', reference: RC14, check: newsletterId },
  SUBSCRIBED: {
    id: '6388546374527196',
    path: 'xwa2_newsletter_subscribed',
    reference: 'whatsmeow newsletter.go:119 (web id; desktop 8621797084555037); WA Web WAWebMexFetchAllNewslettersMetadataJobQuery (2023 bundle 923995.js:189)',
    check: only(),
  },
  DIRECTORY_LIST: {
    id: '26125047313831973',
    path: 'xwa2_newsletters_directory_list',
    reference: 'WA Web WAWebMexFetchNewsletterDirectoryListJob (Cobalt FetchNewsletterDirectoryListMexRequest)',
    check: all(only('input', 'fetch_status_metadata'), fetchStatusMetadata, (v) => {
      const input = record(v.input);
      const filters = record(input?.filters);
      if (!input || !isString(input.view)) return 'input.view is required';
      if (!filters || !stringArray(filters.country_codes) || !stringArray(filters.categories)) return 'input.filters {country_codes, categories} is required';
      return page(input);
    }),
  },
  DIRECTORY_SEARCH: {
    id: '26301059626252132',
    path: 'xwa2_newsletters_directory_search',
    reference: 'WA Web WAWebMexFetchNewsletterDirectorySearchResultsJob (Cobalt wire/stanza FetchNewsletterDirectorySearchResultsMexRequest)',
    check: all(only('input', 'fetch_status_metadata'), fetchStatusMetadata, (v) => {
      const input = record(v.input);
      if (!input || !isString(input.search_text)) return 'input.search_text is required';
      if (!stringArray(input.categories)) return 'input.categories is required';
      return page(input);
    }),
  },
  ADMIN_INVITE: {
    id: '9387141988078609',
    path: 'xwa2_newsletter_admin_invite_create',
    reference: 'WA Web WAWebMexCreateNewsletterAdminInviteJob (Cobalt CreateNewsletterAdminInviteMexRequest)',
    check: all(only('newsletter_id', 'user_id'), newsletterId, userLid),
  },
  ADMIN_INVITE_REVOKE: {
    id: '9656078347839416',
    path: 'xwa2_newsletter_admin_invite_revoke',
    reference: 'WA Web WAWebMexRevokeNewsletterAdminInviteJobMutation.graphql params.id',
    check: all(only('newsletter_id', 'user_id'), newsletterId, userLid),
  },
  ADMIN_INVITE_ACCEPT: {
    id: '9580828702035549',
    path: 'xwa2_newsletter_admin_invite_accept',
    reference: 'WA Web WAWebMexAcceptNewsletterAdminInviteJobMutation.graphql params.id',
    check: all(only('newsletter_id'), newsletterId),
  },
  REACHOUT_TIMELOCK: { id: '23983697327930364', path: 'xwa2_fetch_account_reachout_timelock', reference: RC14, check: only() },
  MESSAGE_CAPPING_INFO: {
    id: '24503548349331633',
    path: 'xwa2_message_capping_info',
    reference: RC14,
    check: (v) => (isString(record(v.input)?.type) ? undefined : 'input.type is required'),
  },
} satisfies Record<string, MexQuery>;

export type MexQueryName = keyof typeof MEX_QUERIES;

const BY_ID = new Map<string, MexQueryName>(Object.entries(MEX_QUERIES).map(([name, query]) => [query.id, name as MexQueryName]));

/** The query an id names, or undefined (a retired, other-platform or unknown id). */
export function mexQueryOf(id: string | undefined): MexQueryName | undefined {
  return id ? BY_ID.get(id) : undefined;
}

/** The relay's answer to a request it refuses: an unknown id, or variables that do not fit. */
export function mexBadRequest(): Record<string, unknown> {
  return { data: null, errors: [{ message: 'Bad Request', path: [], extensions: { error_code: 400, severity: 'CRITICAL', is_retryable: false } }] };
}
