import { proto } from '../baileys';
import { reviveMessage, serialiseMessage, serialiseMessageTwoPass } from './raw-message';

describe('serialiseMessage', () => {
  it('should keep bytes as bytes, numbers as numbers and the key alternates through a round trip', () => {
    const secret = Buffer.alloc(32, 7);
    const message = {
      key: { remoteJid: '123@lid', remoteJidAlt: '5511900000001@s.whatsapp.net', fromMe: false, id: 'ABC' },
      messageTimestamp: 1_770_000_000,
      message: proto.Message.fromObject({
        messageContextInfo: { messageSecret: secret },
        imageMessage: { mediaKey: Buffer.alloc(32, 1), fileLength: 1234, mimetype: 'image/png' },
      }),
      status: proto.WebMessageInfo.Status.SERVER_ACK,
    };
    const revived = reviveMessage(serialiseMessage(message as never));
    expect(revived.key).toEqual(message.key);
    expect(revived.status).toBe(2);
    expect(Buffer.from(revived.message!.messageContextInfo!.messageSecret!)).toEqual(secret);
    expect(revived.message!.imageMessage!.fileLength).toBe(1234);
    // What Baileys does with a stored message (quotes, re-sends) works on the revived copy.
    const bytes = proto.Message.encode(revived.message!).finish();
    expect(proto.Message.decode(bytes).imageMessage!.mimetype).toBe('image/png');
  });
});

describe('serialiseMessage in one pass', () => {
  const cases: Array<[string, unknown]> = [
    [
      'a decoded message (Longs, bytes, enums, repeated fields)',
      proto.WebMessageInfo.decode(
        proto.WebMessageInfo.encode(
          proto.WebMessageInfo.fromObject({
            key: { remoteJid: '5511900000001@s.whatsapp.net', fromMe: true, id: '3EB0AA' },
            messageTimestamp: 1_770_000_000,
            status: proto.WebMessageInfo.Status.DELIVERY_ACK,
            message: {
              extendedTextMessage: { text: 'olá "aspas" \\ \n \u2028', contextInfo: { mentionedJid: ['1@s.whatsapp.net', '2@s.whatsapp.net'], stanzaId: 'X' } },
              messageContextInfo: { messageSecret: Buffer.alloc(32, 9) },
            },
            userReceipt: [{ userJid: '1@s.whatsapp.net', receiptTimestamp: 1_770_000_001 }],
            messageStubParameters: ['a', 'b'],
          }),
        ).finish(),
      ),
    ],
    [
      'a message built by Baileys-like code (Uint8Array and Buffer, undefined, functions, bigint, odd numbers)',
      {
        key: { remoteJid: '1@lid', remoteJidAlt: '1@s.whatsapp.net', fromMe: false, id: 'ID', participant: undefined },
        message: { imageMessage: { mediaKey: new Uint8Array([1, 2, 3, 250]), jpegThumbnail: Buffer.from('thumb'), fileLength: 10n, width: -0 } },
        list: [undefined, () => 1, Symbol('s'), null, Number.NaN, Infinity, new Uint8Array(0), [1, [2, { a: undefined }]]],
        skipped: () => 1,
        symbol: Symbol('s'),
        date: new Date(0),
        nested: { empty: {}, array: [], 'quote"key': true, unicode: 'ä€😀' },
      },
    ],
    ['an object BufferJSON reads as bytes', { media: { type: 'Buffer', data: [1, 2, 3] }, other: 1 }],
  ];

  it.each(cases)('should write what the two-pass form writes: %s', (_, message) => {
    const written = serialiseMessage(message as never);
    expect(written).toBe(serialiseMessageTwoPass(message as never));
    expect(() => reviveMessage(written)).not.toThrow();
  });

  it('should write what the two-pass form writes for random nested values', () => {
    let seed = 7;
    const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    const random = (depth: number): unknown => {
      const pick = Math.floor(next() * 11);
      if (depth > 3 && pick > 6) return 'leaf';
      switch (pick) {
        case 0:
          return next() < 0.5 ? null : undefined;
        case 1:
          return Math.round(next() * 1e6) / (next() < 0.5 ? 1 : 7);
        case 2:
          return `s${next().toString(36)}\n"`;
        case 3:
          return next() < 0.5;
        case 4:
          return Buffer.from([Math.floor(next() * 256), 1]);
        case 5:
          return proto.Message.decode(proto.Message.encode({ conversation: 'x', messageContextInfo: { messageSecret: Buffer.alloc(4, 1) } }).finish());
        case 6:
          return { low: 5, high: 1, toNumber: () => 4_294_967_301 };
        case 7:
          return Array.from({ length: Math.floor(next() * 4) }, () => random(depth + 1));
        default:
          return Object.fromEntries(Array.from({ length: Math.floor(next() * 4) }, (_, index) => [`k${index}`, random(depth + 1)]));
      }
    };
    for (let round = 0; round < 300; round++) {
      const value = { root: random(0), more: random(0) };
      expect(serialiseMessage(value as never)).toBe(serialiseMessageTwoPass(value as never));
    }
  });
});
