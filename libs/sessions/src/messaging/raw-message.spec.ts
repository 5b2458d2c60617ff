import { proto } from '../baileys';
import { reviveMessage, serialiseMessage } from './raw-message';

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
