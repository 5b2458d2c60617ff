import type { Lease } from '@gw/persistence';
import { waves } from './inbound-group-write';
import type { Waiting } from './inbound-store-options';
import { chatObservationKeys, chatWriteKey, contactWriteKey, messageKey, senderObservationKeys } from './inbound/inbound-context';

const lease = (instanceId: string) => ({ instanceId, workerId: 'w', fencingToken: '1' }) as Lease;
const write = (keys?: string[], instanceId = 'i1') => ({ lease: lease(instanceId), keys }) as unknown as Waiting;
/** A received message's keys, as MessageStore keys them. */
const received = (id: string, chat: string[], sender: string[], pushName = 'Ana') => [
  messageKey(id),
  ...chatObservationKeys(chat),
  ...senderObservationKeys(sender, pushName),
];

describe('waves', () => {
  it("should put a busy chat's messages from one sender in one wave, and a group's from several senders", () => {
    const group = [
      write(received('M1', ['5511@s.whatsapp.net', '11@lid'], ['5511@s.whatsapp.net', '11@lid'])),
      write(received('M2', ['5511@s.whatsapp.net', '11@lid'], ['5511@s.whatsapp.net', '11@lid'])),
      write(received('G1', ['1203@g.us'], ['5511@s.whatsapp.net', '11@lid'])),
      write(received('G2', ['1203@g.us'], ['5522@s.whatsapp.net', '22@lid'], 'Bia')),
      // The push name Baileys repeats as contacts.update: observed as the messages observe their sender.
      write(senderObservationKeys(['5511@s.whatsapp.net', '11@lid'], 'Ana')),
    ];
    expect(waves(group)).toEqual([[0, 1, 2, 3, 4]]);
  });

  it('should keep in order what observes a chat or a sender otherwise, or changes it', () => {
    const group = [
      write(received('M1', ['5511@s.whatsapp.net', '11@lid'], ['5511@s.whatsapp.net', '11@lid'])),
      // The same chat named by its JID alone: a wave after.
      write(received('M2', ['5511@s.whatsapp.net'], ['5511@s.whatsapp.net', '11@lid'])),
      // The same sender with another push name: a wave after M2 (same chat identifiers as M2, but not the sender).
      write(received('M3', ['5511@s.whatsapp.net'], ['5511@s.whatsapp.net', '11@lid'], 'Ana Maria')),
      // A saved name changes the contact and its chat: after all of them.
      write([contactWriteKey('5511@s.whatsapp.net'), chatWriteKey('5511@s.whatsapp.net')]),
      // Then a message observing the chat as M1 did: after the change.
      write(received('M4', ['5511@s.whatsapp.net', '11@lid'], ['5511@s.whatsapp.net', '11@lid'])),
      // Another instance's writes are never held by these.
      write(received('X1', ['5511@s.whatsapp.net', '11@lid'], ['5511@s.whatsapp.net', '11@lid']), 'i2'),
    ];
    expect(waves(group)).toEqual([[0, 5], [1], [2], [3], [4]]);
  });

  it('should put a write that names nothing after every write of its instance, and the next ones after it', () => {
    const group = [
      write(received('M1', ['a@s.whatsapp.net'], ['a@s.whatsapp.net'])),
      write(undefined),
      write(received('M2', ['a@s.whatsapp.net'], ['a@s.whatsapp.net'])),
    ];
    expect(waves(group)).toEqual([[0], [1], [2]]);
  });

  it('should put a second write about the same message in the next wave', () => {
    const group = [write([messageKey('M1')]), write([messageKey('M2')]), write([messageKey('M1')])];
    expect(waves(group)).toEqual([[0, 1], [2]]);
  });
});
