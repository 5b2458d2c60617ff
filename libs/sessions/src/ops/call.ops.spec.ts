import type { BinaryNode } from '../baileys';
import type { InboundMessageObserver } from '../messaging/inbound-message.observer';
import type { Session } from '../session/session';
import { callOps } from './call.ops';

const PEER = '5511999999999@s.whatsapp.net';

/** C1 and C2, pinned as docs/protocol.md references them (wa-js sendCallOffer / prepareDestination; a fork's callEnd; checked 2026-12-02). */
describe('call ops', () => {
  const fakeSession = () => {
    const sent: BinaryNode[] = [];
    const destination: BinaryNode[] = [
      { tag: 'to', attrs: { jid: `${PEER.replace('@', ':2@')}` }, content: [{ tag: 'enc', attrs: { v: '2', type: 'msg', count: '0' } }] },
    ];
    const socket = {
      authState: { creds: { me: { id: '5511888888888:7@s.whatsapp.net' } } },
      generateMessageTag: () => 'TAG1',
      getUSyncDevices: async () => [{ jid: PEER.replace('@', ':2@') }],
      assertSessions: async () => true,
      createParticipantNodes: async (_devices: string[], message: unknown, extra: unknown) => {
        expect(message).toEqual({ call: { callKey: expect.any(Buffer) } });
        expect(extra).toEqual({ count: '0' });
        return { nodes: destination, shouldIncludeDeviceIdentity: false };
      },
      query: async (node: BinaryNode) => {
        sent.push(node);
        return { tag: 'ack', attrs: {} };
      },
    };
    return { sent, destination, session: { instanceId: 'i1', openSocket: () => socket } as unknown as Session };
  };

  afterEach(() => jest.useRealTimers());

  it('C1 should offer a video call with wa-js codecs, capability bytes and the Signal-encrypted call key per device', async () => {
    const { sent, destination, session } = fakeSession();
    const { callId } = await callOps({} as InboundMessageObserver)['call.offer'](session, { instanceId: 'i1', jid: PEER, video: true, durationSeconds: 0 });
    expect(callId).toMatch(/^[0-9A-F]{32}$/);
    expect(sent).toEqual([
      {
        tag: 'call',
        attrs: { to: PEER, id: 'TAG1' },
        content: [
          {
            tag: 'offer',
            attrs: { 'call-id': callId, 'call-creator': '5511888888888@s.whatsapp.net' },
            content: [
              { tag: 'audio', attrs: { enc: 'opus', rate: '16000' } },
              { tag: 'audio', attrs: { enc: 'opus', rate: '8000' } },
              { tag: 'video', attrs: { orientation: '0', screen_width: '1920', screen_height: '1080', device_orientation: '0', enc: 'vp8', dec: 'vp8' } },
              { tag: 'net', attrs: { medium: '3' } },
              { tag: 'capability', attrs: { ver: '1' }, content: new Uint8Array([1, 4, 255, 131, 207, 4]) },
              { tag: 'encopt', attrs: { keygen: '2' } },
              { tag: 'destination', attrs: {}, content: destination },
            ],
          },
        ],
      },
    ]);
  });

  it('C2 should hang up after the duration with <terminate call-id call-creator=own user JID>', async () => {
    jest.useFakeTimers();
    const { sent, session } = fakeSession();
    const { callId } = await callOps({} as InboundMessageObserver)['call.offer'](session, { instanceId: 'i1', jid: PEER, video: false, durationSeconds: 5 });
    expect(sent).toHaveLength(1);
    jest.advanceTimersByTime(5_000);
    expect(sent[1]).toEqual({
      tag: 'call',
      attrs: { to: PEER, id: 'TAG1' },
      content: [{ tag: 'terminate', attrs: { 'call-id': callId, 'call-creator': '5511888888888@s.whatsapp.net' } }],
    });
  });
});
