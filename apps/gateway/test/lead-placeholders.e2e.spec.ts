import { nextPhone, Stack } from './support/stack';

/** What /chat/editLead writes is what the placeholders of a send read: the phone receives the resolved text. */
describe('lead fields in placeholders (editLead → /send/text → simulated phone)', () => {
  const stack = new Stack();
  let token: string;
  let contact: string;

  beforeAll(async () => {
    await stack.start();
    ({ token } = await stack.connectedInstance('lead-sender'));
    contact = nextPhone('5541');
    await stack.control('POST', '/sim/accounts', { phone: contact, name: 'Cliente' });
  }, 60_000);

  afterAll(() => stack.stop());

  const sendText = async (text: string) => {
    const { status, body } = await stack.gw.call('POST', '/send/text', { token, body: { number: contact, text } });
    expect({ status, error: body.error }).toEqual({ status: 200, error: '' });
    const message = (await stack.received(contact, body.messageid)).message;
    return { answered: body.text as string, received: (message.extendedTextMessage?.text ?? message.conversation) as string };
  };

  it('should resolve the lead fields, the custom fields and their fieldsMap names written before any message', async () => {
    const fieldsMap = await stack.gw.call('POST', '/instance/updateFieldsMap', { token, body: { lead_field01: 'plano', lead_field20: 'cidade' } });
    expect(fieldsMap.status).toBe(200);
    const lead = await stack.gw.call('POST', '/chat/editLead', {
      token,
      body: {
        id: `${contact}@s.whatsapp.net`,
        lead_name: 'Maria Clara',
        lead_fullName: 'Maria Clara Souza',
        lead_email: 'maria@exemplo.com',
        lead_personalId: '123.456.789-00',
        lead_status: 'qualificado',
        lead_notes: 'prefere à tarde',
        lead_assignedAttendant_id: 'att_7',
        lead_field01: 'Premium',
        lead_field02: 'segundo',
        lead_field20: 'Curitiba',
      },
    });
    expect(lead.status).toBe(200);
    const text =
      'Oi {{first_name}} ({{name}} / {{lead_fullName}}), {{lead_email}} {{lead_personalid}} {{lead_status}} {{lead_notes}} {{lead_assignedAttendant_id}}: ' +
      '{{lead_field01}}={{plano}}, {{lead_field02}}, {{cidade}}={{lead_field20}}, {{unknown}}';
    const expected =
      'Oi Maria (Maria Clara / Maria Clara Souza), maria@exemplo.com 123.456.789-00 qualificado prefere à tarde att_7: ' +
      'Premium=Premium, segundo, Curitiba=Curitiba, {{unknown}}';
    const { answered, received } = await sendText(text);
    expect(received).toBe(expected);
    expect(answered).toBe(expected);
  });

  it('should read the lead as it is at the send: an edit shows in the next message, a cleared field is empty', async () => {
    const edit = await stack.gw.call('POST', '/chat/editLead', { token, body: { number: contact, lead_name: '', lead_field01: 'Gold' } });
    expect(edit.body).toMatchObject({ lead_name: '', lead_fullName: 'Maria Clara Souza', lead_field01: 'Gold' });
    const { received } = await sendText('{{name}}: {{plano}} [{{lead_name}}]');
    expect(received).toBe('Maria Clara Souza: Gold []');
  });
});
