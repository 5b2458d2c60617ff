import { EventEmitter } from 'node:events';
import { ErrorCode } from '@gw/contracts';
import { assertNodeErrorFree } from '@whiskeysockets/baileys';
import { getBinaryNodeChild, type BinaryNode, type WASocket } from '../baileys';
import { CONFLICT_RETRIES, isAppStateConflict, retryOnAppStateConflict, surfaceAppStateConflicts } from './app-state-conflicts';

/** The answer to an upload, as WhatsApp sends it (whatsmeow #382/#686): the collection of type error, and the patches missed. */
const answer = (id: string, collection: BinaryNode): BinaryNode => ({
  tag: 'iq',
  attrs: { id, type: 'result', from: 's.whatsapp.net' },
  content: [{ tag: 'sync', attrs: {}, content: [collection] }],
});
const refused = (code: string): BinaryNode => ({
  tag: 'collection',
  attrs: { name: 'regular_low', type: 'error' },
  content: [
    { tag: 'error', attrs: { code, text: 'conflict' } },
    { tag: 'patches', attrs: {}, content: [{ tag: 'patch', attrs: {}, content: Buffer.from([1, 2]) }] },
  ],
});

/** A socket's ws as Baileys drives it: `frame` first, then `TAG:<id>` for the query waiting; the query throws on a top-level error. */
function socket() {
  const ws = new EventEmitter();
  surfaceAppStateConflicts({ ws } as unknown as Pick<WASocket, 'ws'>);
  const receive = (frame: BinaryNode): { received: BinaryNode; thrown: unknown } => {
    let received: BinaryNode | undefined;
    ws.once(`TAG:${frame.attrs.id}`, (node: BinaryNode) => (received = node));
    ws.emit('frame', frame);
    ws.emit(`TAG:${frame.attrs.id}`, frame);
    try {
      assertNodeErrorFree(received!);
      return { received: received!, thrown: undefined };
    } catch (error) {
      return { received: received!, thrown: error };
    }
  };
  return { ws, receive };
}

describe('surfaceAppStateConflicts', () => {
  it('should make the query of an upload refused with a 409 throw, even when the answer was looked at before', () => {
    const { ws, receive } = socket();
    // rc14 indexes a node's children at its first look-up (a WeakMap): an error pushed into it afterwards stays unseen.
    ws.on('frame', (frame: BinaryNode) => getBinaryNodeChild(frame, 'error'));
    const frame = answer('1.2-3', refused('409'));
    const { thrown } = receive(frame);
    expect(thrown).toMatchObject({ message: 'app state conflict (regular_low)', data: 409 });
    expect(isAppStateConflict(thrown)).toBe(true);
    // The node itself is left as it came (other listeners see WhatsApp's answer).
    expect((frame.content as BinaryNode[]).map((child) => child.tag)).toEqual(['sync']);
  });

  it('should pass every other answer as it came: a stored upload, a fetch, another collection error', () => {
    const { receive } = socket();
    const stored = answer('1', { tag: 'collection', attrs: { name: 'regular_low', version: '7' } });
    expect(receive(stored)).toEqual({ received: stored, thrown: undefined });
    const other = answer('2', refused('400'));
    expect(receive(other)).toEqual({ received: other, thrown: undefined });
    const plain: BinaryNode = { tag: 'iq', attrs: { id: '3', type: 'result' } };
    expect(receive(plain)).toEqual({ received: plain, thrown: undefined });
  });
});

describe('retryOnAppStateConflict', () => {
  const conflict = () => Object.assign(new Error('app state conflict (regular)'), { data: 409 });

  it('should send the change again after a 409 until it lands, and answer what it answered', async () => {
    let tries = 0;
    const change = async () => {
      if (++tries < 3) throw conflict();
      return 'stored';
    };
    await expect(retryOnAppStateConflict(change)).resolves.toBe('stored');
    expect(tries).toBe(3);
  });

  it('should answer Conflict once the change was refused every time, and pass other errors at once', async () => {
    let tries = 0;
    await expect(
      retryOnAppStateConflict(async () => {
        tries++;
        throw conflict();
      }),
    ).rejects.toMatchObject({ code: ErrorCode.Conflict, message: expect.stringContaining('another device') });
    expect(tries).toBe(CONFLICT_RETRIES + 1);

    tries = 0;
    const refusal = Object.assign(new Error('bad-request'), { data: 400 });
    await expect(
      retryOnAppStateConflict(async () => {
        tries++;
        throw refusal;
      }),
    ).rejects.toBe(refusal);
    expect(tries).toBe(1);
  });
});
