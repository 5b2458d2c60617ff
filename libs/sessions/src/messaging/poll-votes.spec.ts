import { createCipheriv, createHash, createHmac, randomBytes } from 'node:crypto';
import type { MessageRow } from '@gw/persistence';
import { proto } from '../baileys';
import { decryptVote, pollCreationOf } from './poll-votes';
import { serialiseMessage } from './raw-message';

const me = { jid: '900@lid', pn: '5511900000000@s.whatsapp.net', lid: '900@lid' };
const voter = { jid: '111@lid', pn: '5511911111111@s.whatsapp.net', lid: '111@lid' };
const secret = randomBytes(32);

function vote(creatorJid: string, voterJid: string, selected: string[]) {
  const sign = Buffer.concat([Buffer.from('POLL1'), Buffer.from(creatorJid), Buffer.from(voterJid), Buffer.from('Poll Vote'), Buffer.from([1])]);
  const key = createHmac('sha256', createHmac('sha256', Buffer.alloc(32)).update(secret).digest())
    .update(sign)
    .digest();
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(`POLL1\u0000${voterJid}`));
  const plain = proto.Message.PollVoteMessage.encode({ selectedOptions: selected.map((name) => createHash('sha256').update(name).digest()) }).finish();
  return { encPayload: Buffer.concat([cipher.update(plain), cipher.final(), cipher.getAuthTag()]), encIv: iv };
}

function creationRow(): MessageRow {
  const raw = serialiseMessage({
    key: { remoteJid: voter.pn, fromMe: true, id: 'POLL1' },
    message: proto.Message.fromObject({
      messageContextInfo: { messageSecret: secret },
      pollCreationMessageV3: { name: 'Lunch?', options: [{ optionName: 'Pizza' }, { optionName: 'Sushi' }], selectableOptionsCount: 1 },
    }),
  } as never);
  return { messageId: 'POLL1', fromMe: true, sender: me.lid, senderPn: me.pn, senderLid: me.lid, raw } as MessageRow;
}

describe('decryptVote', () => {
  const poll = pollCreationOf(creationRow(), me)!;

  it('should read the options and the secret of a stored poll', () => {
    expect(poll).toMatchObject({ messageId: 'POLL1', options: ['Pizza', 'Sushi'], creator: me });
    expect(Buffer.from(poll.secret)).toEqual(secret);
  });

  it.each([
    ['phone numbers', me.pn, voter.pn],
    ['LIDs', me.lid, voter.lid],
    ['a LID creator and a numbered voter', me.lid, voter.pn],
  ])('should decrypt a vote keyed with %s', (_, creatorJid, voterJid) => {
    expect(decryptVote(vote(creatorJid, voterJid, ['Sushi']), poll, voter)).toEqual(['Sushi']);
  });

  it('should give null for a vote it cannot decrypt and an empty list for a withdrawn vote', () => {
    expect(decryptVote(vote('someone@s.whatsapp.net', voter.pn, ['Pizza']), poll, voter)).toBeNull();
    expect(decryptVote(vote(me.pn, voter.pn, []), poll, voter)).toEqual([]);
  });
});
