import type {
  NewsletterDoneResponse,
  NewsletterListResponse,
  NewsletterLiveResponse,
  NewsletterMessagesResponse,
  NewsletterPostChangeResponse,
  NewsletterPostChangedResponse,
  NewsletterPostResponse,
  NewsletterResponse,
  NewsletterSearchResponse,
  NewsletterWrappedResponse,
} from './newsletter.response';

/** Example bodies of the `/newsletter/*` answers, from a run against the simulator, typed as their response classes. */
export const NEWSLETTER_EXAMPLE: NewsletterResponse = {
  id: '120363123456789012@newsletter',
  state: { type: 'active' },
  thread_metadata: {
    creation_time: '1779628800',
    invite: '0029VaAbCdEfGhIjKlMnOp',
    name: { text: 'Canal de Promoções', id: '1779628800', update_time: '1779628800' },
    description: { text: 'Ofertas e novidades da loja', id: '1779628800', update_time: '1779628800' },
    subscribers_count: '0',
    verification: 'unverified',
    picture: { url: '', id: '', type: 'IMAGE', direct_path: '' },
    preview: { url: '', id: '', type: 'PREVIEW', direct_path: '' },
    settings: { reaction_codes: { value: 'ALL' } },
  },
  viewer_metadata: { mute: 'off', role: 'owner' },
};

export const NEWSLETTER_POST_EXAMPLE: NewsletterPostResponse = {
  serverid: 100,
  messageid: '3EB0B4302B3A8A52F7A1',
  type: 'text',
  timestamp: '2026-03-24T18:20:00Z',
  viewsCount: 1200,
  reactionCounts: { '👍': 22, '🔥': 7 },
  message: { conversation: 'Post do canal' },
};

/** What /newsletter/messages/edit and /messages/delete answer. */
export const POST_CHANGE_EXAMPLE: NewsletterPostChangedResponse = {
  jid: '120363123456789012@newsletter',
  targetmessageid: '3EB0B4302B3A8A52F7A1',
  targetserverid: 101,
  messageid: '3EB0B4302B3A8A52F7A1',
  serverid: 101,
};

export const NEWSLETTER_WRAPPED_EXAMPLE: NewsletterWrappedResponse = { response: NEWSLETTER_EXAMPLE };

export const NEWSLETTER_LINKED_EXAMPLE: NewsletterWrappedResponse = { response: { ...NEWSLETTER_EXAMPLE, viewer_metadata: { mute: 'off', role: 'guest' } } };

export const NEWSLETTER_LIST_EXAMPLE: NewsletterListResponse = { response: [{ ...NEWSLETTER_EXAMPLE, viewer_metadata: { mute: 'off', role: 'subscriber' } }] };

export const NEWSLETTER_MESSAGES_EXAMPLE: NewsletterMessagesResponse = { response: [NEWSLETTER_POST_EXAMPLE] };

export const NEWSLETTER_DONE_EXAMPLE: NewsletterDoneResponse = { response: true };

export const NEWSLETTER_LIVE_EXAMPLE: NewsletterLiveResponse = { response: '5m0s' };

export const NEWSLETTER_POST_CHANGE_EXAMPLE: NewsletterPostChangeResponse = { response: POST_CHANGE_EXAMPLE };

export const NEWSLETTER_SEARCH_EXAMPLE: NewsletterSearchResponse = { response: { after: 'YXJyYXljb25uZWN0aW9uOjIw', data: [NEWSLETTER_EXAMPLE] } };
