import type { Session } from '../session/session';
import type { InboundMessageObserver } from '../messaging/inbound-message.observer';
import { contactActionOf, contactOps } from './contact.ops';

const PN = '5511999999999@s.whatsapp.net';

/** `/contact/add`'s app-state mutation, pinned as docs/protocol.md references it (WA Web 664221.js, WAHA #2285; checked 2026-12-02). */
describe('contact ops', () => {
  it('should name the number and, when known, the LID of a saved contact (WA Web reads lidJid)', () => {
    expect(contactActionOf(PN, 'Ana', '12345678901234:7@lid')).toEqual({
      fullName: 'Ana',
      firstName: 'Ana',
      saveOnPrimaryAddressbook: true,
      pnJid: PN,
      lidJid: '12345678901234@lid',
    });
    expect(contactActionOf(PN, 'Ana', null)).toEqual({ fullName: 'Ana', firstName: 'Ana', saveOnPrimaryAddressbook: true, pnJid: PN });
  });

  it('should write the contactAction with the LID WhatsApp told for the number', async () => {
    const written: unknown[] = [];
    const socket = {
      signalRepository: { lidMapping: { getLIDForPN: async (pn: string) => (pn === PN ? '12345678901234@lid' : null) } },
      addOrEditContact: async (jid: string, action: unknown) => {
        written.push([jid, action]);
      },
    };
    const handler = { addressBookChanged: async () => undefined, idle: async () => undefined };
    const inbound = { handlerFor: () => handler } as unknown as InboundMessageObserver;
    const session = { instanceId: 'i1', openSocket: () => socket } as unknown as Session;
    await expect(contactOps(inbound)['contact.add'](session, { instanceId: 'i1', jid: PN, name: 'Ana' })).resolves.toEqual({ ok: true });
    expect(written).toEqual([[PN, expect.objectContaining({ pnJid: PN, lidJid: '12345678901234@lid', fullName: 'Ana' })]]);
  });
});
