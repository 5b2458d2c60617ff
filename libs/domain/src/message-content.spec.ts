import { describeContent } from './message-content';

describe('describeContent', () => {
  it('should describe a plain conversation with string content', () => {
    expect(describeContent({ conversation: 'Oi' })).toMatchObject({ messageType: 'Conversation', type: 'text', text: 'Oi', content: 'Oi' });
  });

  it('should describe an extended text with its quote', () => {
    const described = describeContent({ extendedTextMessage: { text: 'yes', contextInfo: { stanzaId: 'Q1' } } });
    expect(described).toMatchObject({ messageType: 'ExtendedTextMessage', type: 'text', text: 'yes', quoted: 'Q1' });
    expect(described.content).toEqual({ text: 'yes', contextInfo: { stanzaID: 'Q1' } });
  });

  it.each([
    [{ imageMessage: { caption: 'c' } }, 'ImageMessage', 'image', 'c'],
    [{ videoMessage: { gifPlayback: true } }, 'VideoMessage', 'gif', ''],
    [{ audioMessage: { ptt: true } }, 'AudioMessage', 'ptt', ''],
    [{ audioMessage: {} }, 'AudioMessage', 'audio', ''],
    [{ documentMessage: { fileName: 'a.pdf' } }, 'DocumentMessage', 'document', ''],
    [{ contactMessage: { displayName: 'Ana' } }, 'ContactMessage', 'vcard', 'Ana'],
    [{ locationMessage: { degreesLatitude: 1 } }, 'LocationMessage', 'location', ''],
    [{ stickerMessage: {} }, 'StickerMessage', 'sticker', ''],
  ])('should describe media %#', (message, messageType, mediaType, text) => {
    expect(describeContent(message)).toMatchObject({ messageType, type: 'media', mediaType, text });
  });

  it('should unwrap ephemeral and view-once envelopes', () => {
    expect(describeContent({ ephemeralMessage: { message: { viewOnceMessageV2: { message: { imageMessage: {} } } } } })).toMatchObject({
      messageType: 'ImageMessage',
    });
  });

  it('should point a reaction at its target', () => {
    expect(describeContent({ reactionMessage: { text: '❤️', key: { id: 'T1' } } })).toMatchObject({ type: 'reaction', text: '❤️', reaction: 'T1' });
  });

  it('should link a poll vote to its poll', () => {
    expect(describeContent({ pollUpdateMessage: { pollCreationMessageKey: { id: 'P1' } } })).toMatchObject({
      messageType: 'PollUpdateMessage',
      type: 'poll',
      quoted: 'P1',
    });
  });

  it('should read a list reply', () => {
    expect(
      describeContent({ listResponseMessage: { title: 'Fones', singleSelectReply: { selectedRowId: 'fones' }, contextInfo: { stanzaId: 'L1' } } }),
    ).toMatchObject({
      messageType: 'ListResponseMessage',
      mediaType: 'list_response',
      buttonOrListid: 'fones',
      vote: 'Fones',
      quoted: 'L1',
    });
  });

  it('should read a native flow reply id from its params', () => {
    expect(
      describeContent({ interactiveResponseMessage: { body: { text: 'Yes' }, nativeFlowResponseMessage: { name: 'quick_reply', paramsJson: '{"id":"y1"}' } } }),
    ).toMatchObject({ buttonOrListid: 'y1', vote: 'Yes' });
  });

  it('should describe an edit as the new content pointing at the original', () => {
    expect(describeContent({ protocolMessage: { type: 14, key: { id: 'ORIG' }, editedMessage: { conversation: 'Oi2' } } })).toMatchObject({
      messageType: 'Conversation',
      text: 'Oi2',
      edited: 'ORIG',
    });
  });

  it('should describe a revoke', () => {
    expect(describeContent({ protocolMessage: { type: 0, key: { id: 'GONE' } } })).toMatchObject({ type: 'protocol', revokes: 'GONE' });
  });
});
