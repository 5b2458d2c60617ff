import { ApiError } from '../common/api-error';
import { snapshotOf } from './session-move.service';

const SESSION = {
  device: {
    jid: '5511999999999:12@s.whatsapp.net',
    lid: '',
    owner: '5511999999999',
    profileName: 'Loja',
    isBusiness: false,
    platform: 'android',
    browser: 'chrome',
  },
  settings: {
    name: 'loja',
    systemName: '',
    adminField01: '',
    adminField02: '',
    openaiApikey: '',
    chatbotEnabled: false,
    chatbotIgnoreGroups: false,
    chatbotStopConversation: '',
    chatbotStopMinutes: 0,
    chatbotStopWhenYouSendMsg: 0,
    fieldsMap: {},
    msgDelayMin: 0,
    msgDelayMax: 0,
    currentPresence: 'available',
    historyDays: 90,
    historyFullSync: false,
    proxy: null,
  },
  auth: { creds: '{}', keys: [{ type: 'session', id: 'a', value: '{}' }] },
  webhooks: [{ url: 'https://example.com/hook', kind: 'webhook', secret: 'whsec_x', events: ['messages'] }],
  chatwoot: null,
  chatbotRecords: [],
  knowledgeChunks: [],
};
const doc = (session: unknown, extra: Record<string, unknown> = {}) => ({ format: 'wa-gateway/session', version: 1, session, ...extra });

function refusal(content: unknown): string {
  try {
    snapshotOf(content);
  } catch (error) {
    if (error instanceof ApiError && error.status === 400) return error.message;
    throw error;
  }
  return 'accepted';
}

describe('snapshotOf', () => {
  it('should accept a well-formed session', () => {
    expect(snapshotOf(doc(SESSION))).toMatchObject({ device: { jid: SESSION.device.jid }, webhooks: SESSION.webhooks });
  });

  it('should refuse, as a 400 naming the part, anything else a bundle might hold', () => {
    const changed = (path: (session: any) => void) => {
      const session = structuredClone(SESSION);
      path(session);
      return doc(session);
    };
    expect(refusal(null)).toBe('Malformed bundle: not a session bundle');
    expect(refusal({ ...doc(SESSION), format: 'other' })).toBe('Malformed bundle: not a session bundle');
    expect(refusal({ ...doc(SESSION), version: 2 })).toBe('Malformed bundle: version 2 is not one this server reads');
    expect(refusal(changed((s) => delete s.auth))).toContain('credentials missing');
    expect(refusal(changed((s) => (s.device.jid = 'not a jid')))).toBe('Malformed bundle: device jid');
    expect(refusal(changed((s) => (s.settings.msgDelayMin = -1)))).toBe('Malformed bundle: settings.msgDelayMin');
    expect(refusal(changed((s) => (s.settings.name = ' ')))).toBe('Malformed bundle: settings.name');
    expect(refusal(changed((s) => (s.settings.proxy = { mode: 'other' })))).toBe('Malformed bundle: settings.proxy');
    expect(refusal(changed((s) => (s.auth.keys = [{ type: 'session', id: 1, value: '' }])))).toBe('Malformed bundle: credentials');
    expect(refusal(changed((s) => (s.webhooks[0].kind = 'ftp')))).toBe('Malformed bundle: webhooks');
    expect(refusal(changed((s) => (s.chatbotRecords = {})))).toBe('Malformed bundle: chatbotRecords');
  });
});
