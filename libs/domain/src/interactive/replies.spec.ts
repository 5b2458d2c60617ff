import { createDecipheriv, createHash, createHmac } from 'node:crypto';
import { toProtoJson } from '../proto-json';
import { buildButtonMenu, buildCarousel, buildListMenu, buildPoll } from './builders';
import { buildOptionReply, buildPollVote, encodePollVote, interactiveOriginal, selectOption, selectPollOption } from './replies';
import { parseButtons, parseCarousel, parseList } from '../menu-choices';

const secret = Buffer.alloc(32, 9);

/** The receiving side, written independently: what Baileys' decryptPollVote does. */
function decrypt(encPayload: Buffer, encIv: Buffer, ctx: { msgId: string; creator: string; voter: string }): Buffer {
  const sign = Buffer.concat([Buffer.from(ctx.msgId), Buffer.from(ctx.creator), Buffer.from(ctx.voter), Buffer.from('Poll Vote'), Buffer.from([1])]);
  const key = createHmac('sha256', createHmac('sha256', Buffer.alloc(32)).update(secret).digest())
    .update(sign)
    .digest();
  const decipher = createDecipheriv('aes-256-gcm', key, encIv);
  decipher.setAAD(Buffer.from(`${ctx.msgId}\u0000${ctx.voter}`));
  decipher.setAuthTag(encPayload.subarray(encPayload.length - 16));
  return Buffer.concat([decipher.update(encPayload.subarray(0, encPayload.length - 16)), decipher.final()]);
}

describe('interactive replies', () => {
  it('should read a poll with its secret, from the message and from the stored (Go-style) content', () => {
    const { message } = buildPoll('Q', ['A', 'B', 'C'], 1, secret.toString('base64'));
    expect(interactiveOriginal(message)).toEqual({ kind: 'poll', name: 'Q', options: ['A', 'B', 'C'], secret });
    const stored = { pollCreationMessageV3: toProtoJson(message.pollCreationMessageV3) } as Record<string, unknown>;
    expect(interactiveOriginal(stored)).toMatchObject({ kind: 'poll', options: ['A', 'B', 'C'], secret });
  });

  it('should select poll options by position, refuse a missing one', () => {
    expect(selectPollOption(['A', 'B'], '2')).toBe(1);
    expect(selectPollOption(['A', 'B'], 'A')).toBe(0);
    expect(() => selectPollOption(['A', 'B'], '3')).toThrow(/does not exist/);
  });

  it('should encrypt a vote the receiving side decrypts to the option hash', () => {
    const { message } = buildPollVote(['B'], {
      secret,
      pollMsgId: 'POLL1',
      pollCreatorJid: '551@s.whatsapp.net',
      voterJid: '552@s.whatsapp.net',
      chatJid: '551@s.whatsapp.net',
      fromMe: false,
    });
    const update = message.pollUpdateMessage as any;
    expect(update.pollCreationMessageKey).toEqual({ remoteJid: '551@s.whatsapp.net', fromMe: false, id: 'POLL1' });
    const plain = decrypt(Buffer.from(update.vote.encPayload, 'base64'), Buffer.from(update.vote.encIv, 'base64'), {
      msgId: 'POLL1',
      creator: '551@s.whatsapp.net',
      voter: '552@s.whatsapp.net',
    });
    expect(plain).toEqual(encodePollVote([createHash('sha256').update('B').digest()]));
  });

  it('should pick list rows by rowId, then text, then position, from stored content', () => {
    const { message } = buildListMenu('m', parseList(['[S]', 'Coffee|c1', 'Tea|t1', '2|two']));
    const original = interactiveOriginal({ listMessage: toProtoJson(message.listMessage) } as Record<string, unknown>);
    if (!original || original.kind !== 'list') throw new Error('not a list');
    expect(selectOption(original.options, 'two', 'list').text).toBe('2');
    expect(selectOption(original.options, 'Tea', 'list').id).toBe('t1');
    expect(selectOption(original.options, '1', 'list').id).toBe('c1');
    expect(() => selectOption(original.options, '9', 'list')).toThrow(/does not exist/);
    expect(buildOptionReply('list', original.options[0], { stanzaId: 'L1' }).message).toEqual({
      listResponseMessage: { title: 'Coffee', description: '', listType: 1, singleSelectReply: { selectedRowId: 'c1' }, contextInfo: { stanzaId: 'L1' } },
    });
  });

  it('should answer native flow and carousel quick replies, refuse URL/call/copy buttons', () => {
    const { message } = buildButtonMenu('b', parseButtons(['Yes|y', 'Site|https://x.com', 'Code|copy:1']));
    const original = interactiveOriginal(message);
    if (!original || original.kind !== 'native') throw new Error('not native');
    expect(selectOption(original.options, 'y', 'buttons').text).toBe('Yes');
    expect(() => selectOption(original.options, '2', 'buttons')).toThrow(/cannot be replied/);
    expect(() => selectOption(original.options, 'Code', 'buttons')).toThrow(/cannot be replied/);
    expect(buildOptionReply('native', original.options[0], { stanzaId: 'B1', participant: 'p@s.whatsapp.net' }).message).toEqual({
      interactiveResponseMessage: {
        body: { text: 'Yes', format: 0 },
        nativeFlowResponseMessage: { name: 'quick_reply', paramsJson: '{"id":"y"}', version: 3 },
        contextInfo: { stanzaId: 'B1', participant: 'p@s.whatsapp.net' },
      },
    });
    const carousel = interactiveOriginal(buildCarousel('c', parseCarousel(['[One]', 'Buy|b1', '[Two]', 'Buy too|b2'])).message);
    expect(carousel?.kind).toBe('native');
    expect(selectOption((carousel as { options: any[] }).options, '2', 'buttons')).toMatchObject({ id: 'b2', card: 1 });
  });

  it('should answer legacy buttons and templates', () => {
    const buttons = interactiveOriginal({ buttonsMessage: { contentText: 'x', buttons: [{ buttonId: 'a', buttonText: { displayText: 'A' }, type: 1 }] } });
    expect(buttons).toEqual({ kind: 'buttons', options: [{ id: 'a', text: 'A', name: 'RESPONSE', replyable: true }] });
    const template = interactiveOriginal({
      templateMessage: {
        hydratedTemplate: {
          hydratedButtons: [
            { index: 0, urlButton: { displayText: 'Web', url: 'https://x' } },
            { index: 1, quickReplyButton: { displayText: 'Ok', id: 'ok' } },
          ],
        },
      },
    });
    if (!template || template.kind !== 'template') throw new Error('not a template');
    const option = selectOption(template.options, 'ok', 'buttons');
    expect(buildOptionReply('template', option, { stanzaId: 'T' }).message).toEqual({
      templateButtonReplyMessage: { selectedId: 'ok', selectedDisplayText: 'Ok', selectedIndex: 1, contextInfo: { stanzaId: 'T' } },
    });
    expect(interactiveOriginal({ conversation: 'hi' })).toBeNull();
  });
});
