import { ErrorCode } from '@gw/contracts';
import { BufferJSON } from '@whiskeysockets/baileys';
import { Readable } from 'node:stream';
import type { Session } from '../session/session';
import { mediaOps, mediaRequests, readBounded } from './media.ops';

/** A stored voice note whose message declares `fileLength` bytes; the socket must not be opened for a refused one. */
function harness(fileLength: number) {
  const raw = JSON.stringify(
    { key: { id: 'V1', remoteJid: '5521@s.whatsapp.net' }, message: { audioMessage: { mimetype: 'audio/ogg; codecs=opus', ptt: true, fileLength } } },
    BufferJSON.replacer,
  );
  const stored: unknown[] = [];
  const ops = mediaOps({
    ledger: { rawMessage: async () => ({ raw }) } as never,
    files: { store: async (...args: unknown[]) => (stored.push(args), 'f1') } as never,
    instances: { findById: async () => null } as never,
    logger: {} as never,
  });
  const session = {
    instanceId: 'i1',
    openSocket: () => {
      throw new Error('the socket was opened: the media would have been downloaded');
    },
  } as unknown as Session;
  return { ops, session, stored };
}

describe('media ops: media.download maxBytes', () => {
  it('keeps maxBytes from the request (and leaves it out when absent or not positive)', () => {
    expect(mediaRequests['media.download']({ messageId: 'V1', ttlMs: 5, maxBytes: 100 }, 'i1')).toEqual({
      instanceId: 'i1',
      messageId: 'V1',
      ttlMs: 5,
      maxBytes: 100,
    });
    expect(mediaRequests['media.download']({ messageId: 'V1', ttlMs: 5 }, 'i1')).toEqual({ instanceId: 'i1', messageId: 'V1', ttlMs: 5 });
    expect(mediaRequests['media.download']({ messageId: 'V1', maxBytes: 'x' }, 'i1')).not.toHaveProperty('maxBytes');
  });

  it('refuses (too_large) a media the message declares larger than maxBytes, before downloading anything', async () => {
    const { ops, session, stored } = harness(100 * 1024 * 1024);
    await expect(ops['media.download'](session, { instanceId: 'i1', messageId: 'V1', ttlMs: 1_000, maxBytes: 25 * 1024 * 1024 })).rejects.toMatchObject({
      code: ErrorCode.TooLarge,
      message: expect.stringMatching(/larger than 26214400 bytes \(104857600\)/),
    });
    expect(stored).toEqual([]);
  });

  it('reads a stream whole within the bound, and stops (too_large, the stream destroyed) past it', async () => {
    expect(await readBounded(Readable.from([Buffer.from('ab'), Buffer.from('cd')]), 4)).toEqual(Buffer.from('abcd'));
    let pulled = 0;
    const endless = Readable.from(
      (function* () {
        for (;;) {
          pulled++;
          yield Buffer.alloc(1024);
        }
      })(),
    );
    await expect(readBounded(endless, 10_000)).rejects.toMatchObject({ code: ErrorCode.TooLarge });
    expect(endless.destroyed).toBe(true);
    expect(pulled).toBeLessThan(20);
  });
});
