import { protoFieldName, toProtoJson } from './proto-json';

describe('protoFieldName', () => {
  it.each([
    ['url', 'URL'],
    ['id', 'ID'],
    ['remoteJid', 'remoteJID'],
    ['fileSha256', 'fileSHA256'],
    ['fileEncSha256', 'fileEncSHA256'],
    ['midQualityFileSha256', 'midQualityFileSHA256'],
    ['jpegThumbnail', 'JPEGThumbnail'],
    ['stanzaId', 'stanzaID'],
    ['selectedRowId', 'selectedRowID'],
    ['senderTimestampMs', 'senderTimestampMS'],
    ['stickerSentTs', 'stickerSentTS'],
    ['encIv', 'encIV'],
    ['ptt', 'PTT'],
    ['mimetype', 'mimetype'],
    ['degreesLatitude', 'degreesLatitude'],
  ])('should write %s as %s', (input, expected) => {
    expect(protoFieldName(input)).toBe(expected);
  });
});

describe('toProtoJson', () => {
  it('should convert bytes, longs and nested keys like the captures', () => {
    const long = { low: 5, high: 0, unsigned: true, toNumber: () => 5 };
    expect(
      toProtoJson({
        url: 'https://x',
        fileSha256: new Uint8Array([1, 2, 3]),
        fileLength: long,
        contextInfo: { stanzaId: 'ABC', quotedMessage: { conversation: 'hi' } },
        empty: new Uint8Array(),
        missing: null,
      }),
    ).toEqual({ URL: 'https://x', fileSHA256: 'AQID', fileLength: 5, contextInfo: { stanzaID: 'ABC', quotedMessage: { conversation: 'hi' } } });
  });
});
