/** Example bodies of the `/newsletter/*` answers, from a run against the simulator. */
export const NEWSLETTER_EXAMPLE = {
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

export const NEWSLETTER_POST_EXAMPLE = {
  serverid: 100,
  messageid: '3EB0B4302B3A8A52F7A1',
  type: 'text',
  timestamp: '2026-03-24T18:20:00Z',
  viewsCount: 1200,
  reactionCounts: { '👍': 22, '🔥': 7 },
  message: { conversation: 'Post do canal' },
};

/** What /newsletter/messages/edit and /messages/delete answer. */
export const POST_CHANGE_EXAMPLE = {
  jid: '120363123456789012@newsletter',
  targetmessageid: '3EB0B4302B3A8A52F7A1',
  targetserverid: 101,
  messageid: '3EB0B4302B3A8A52F7A1',
  serverid: 101,
};
