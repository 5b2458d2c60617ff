import type { ContactRow } from '@gw/persistence';
import { selectStatusRecipients, type StatusAudienceInput } from './status-audience';

const contact = (jid: string, fields: Partial<ContactRow> = {}): ContactRow => ({
  instanceId: 'r1',
  jid,
  lid: '',
  contactName: '',
  pushName: '',
  verifiedName: '',
  inAddressBook: false,
  updatedAt: new Date(0),
  ...fields,
});

const ANA = '5511900000001@s.whatsapp.net';
const BIA = '5511900000002@s.whatsapp.net';
const CAIO = '5511900000003@s.whatsapp.net';
const contacts = [
  contact(ANA, { contactName: 'Ana', inAddressBook: true, lid: '111@lid' }),
  contact(BIA, { contactName: 'Bia' }),
  contact(CAIO, { pushName: 'Caio' }),
  contact('222@lid', { contactName: 'Só LID', inAddressBook: true }),
  contact('5511900000004@s.whatsapp.net', { verifiedName: 'Loja X' }),
];

const input = (overrides: Partial<StatusAudienceInput> = {}): StatusAudienceInput => ({
  contacts,
  privacy: { type: 'contacts', fallback: false },
  pnForLid: async (lid) => (lid === '111@lid' ? ANA : null),
  ...overrides,
});

describe('selectStatusRecipients', () => {
  it('should take the saved contacts with a phone number as the audience, and count the store', async () => {
    const sut = await selectStatusRecipients(input());
    expect(sut.recipients).toEqual([ANA, BIA]);
    expect(sut.debug).toEqual({
      status_privacy_type: 'contacts',
      audience_recipient_count: 2,
      total_contacts_in_store: 5,
      contacts_with_full_name: 3,
      contacts_with_push_name_only: 1,
      contacts_with_business_name_only: 1,
      used_default_privacy_fallback: false,
      explicit_recipients: false,
      selected_recipient_count: 2,
      partial_send: false,
    });
  });

  it('should report a privacy fallback and its error', async () => {
    const sut = await selectStatusRecipients(input({ privacy: { type: 'contacts', fallback: true, error: 'timeout' } }));
    expect(sut.debug).toMatchObject({ used_default_privacy_fallback: true, privacy_lookup_error: 'timeout' });
  });

  it('should resolve numbers, PN and LID JIDs and discard the rest with their reason, in the given order', async () => {
    const sut = await selectStatusRecipients(input({ explicit: ['+55 (11) 90000-0002', '111@lid', ANA, 'abc', '999@lid', CAIO, '123@g.us'] }));
    expect(sut.recipients).toEqual([BIA, ANA]);
    expect(sut.inputs.get(BIA)).toBe('+55 (11) 90000-0002');
    expect(sut.debug.discarded_recipients).toEqual([
      { input: ANA, reason: 'duplicate' },
      { input: 'abc', reason: 'invalid_format' },
      { input: '999@lid', reason: 'lid_unresolved' },
      { input: CAIO, reason: 'outside_status_audience' },
      { input: '123@g.us', reason: 'invalid_format' },
    ]);
    expect(sut.debug).toMatchObject({ explicit_recipients: true, requested_recipient_count: 7, resolved_recipient_count: 2, discarded_recipient_count: 5 });
  });

  it('should cap the list with max_recipients (the first N) and say it was partial', async () => {
    const sut = await selectStatusRecipients(input({ maxRecipients: 1 }));
    expect(sut.recipients).toEqual([ANA]);
    expect(sut.debug).toMatchObject({ max_recipients: 1, selected_recipient_count: 1, partial_send: true });
  });

  it.each([0, 5])('should not cap with max_recipients %i', async (maxRecipients) => {
    const sut = await selectStatusRecipients(input({ maxRecipients }));
    expect(sut.recipients).toHaveLength(2);
    expect(sut.debug.partial_send).toBe(false);
  });

  it('should leave out the excluded contacts of a blacklist, listed by phone number or LID (with a device part)', async () => {
    const byLid = await selectStatusRecipients(input({ privacy: { type: 'blacklist', list: ['111:2@lid'], fallback: false } }));
    expect(byLid.recipients).toEqual([BIA]);
    expect(byLid.debug).toMatchObject({ status_privacy_type: 'blacklist', status_privacy_list_count: 1, audience_recipient_count: 1 });
    const byPhone = await selectStatusRecipients(input({ privacy: { type: 'blacklist', list: [BIA], fallback: false }, explicit: [ANA, BIA] }));
    expect(byPhone.recipients).toEqual([ANA]);
    expect(byPhone.debug.discarded_recipients).toEqual([{ input: BIA, reason: 'outside_status_audience' }]);
  });

  it('should send to exactly the listed users of a whitelist, saved or not, and count the LIDs it cannot resolve', async () => {
    const sut = await selectStatusRecipients(
      input({ privacy: { type: 'whitelist', list: [CAIO, '111@lid', `${CAIO.replace('@', ':4@')}`, '333@lid', 'junk'], fallback: false } }),
    );
    expect(sut.recipients).toEqual([CAIO, ANA]);
    expect(sut.debug).toMatchObject({
      status_privacy_type: 'whitelist',
      status_privacy_list_count: 5,
      status_privacy_list_unresolved: 2,
      audience_recipient_count: 2,
    });
    const explicit = await selectStatusRecipients(input({ privacy: { type: 'whitelist', list: [CAIO], fallback: false }, explicit: [BIA, CAIO] }));
    expect(explicit.recipients).toEqual([CAIO]);
    expect(explicit.debug.discarded_recipients).toEqual([{ input: BIA, reason: 'outside_status_audience' }]);
  });
});
