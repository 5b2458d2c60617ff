import { ErrorCode } from '@gw/contracts';
import type { Session } from '../session/session';
import type { OpRegistry } from './op-handler';
import { isInstanceOp, runOp } from './op-registry';

describe(runOp.name, () => {
  const session = { instanceId: 'i1' } as Session;

  it('should hand the handler the parsed request, with the instance of the subject', async () => {
    const presence = jest.fn().mockResolvedValue({ ok: true });
    const sut = { 'chat.presence': presence } as unknown as OpRegistry;

    await expect(
      runOp(sut, 'chat.presence', session, { instanceId: 'other', chatJid: '5511999999999@s.whatsapp.net', presence: 'composing', delayMs: '250' }),
    ).resolves.toEqual({
      ok: true,
    });
    expect(presence).toHaveBeenCalledWith(session, { instanceId: 'i1', chatJid: '5511999999999@s.whatsapp.net', presence: 'composing', delayMs: 250 });
  });

  it('should refuse a malformed request before the handler runs', async () => {
    const block = jest.fn();
    const sut = { 'blocklist.set': block } as unknown as OpRegistry;

    await expect(runOp(sut, 'blocklist.set', session, { jid: 'not-a-jid', block: true })).rejects.toMatchObject({ code: ErrorCode.BadRequest });
    expect(block).not.toHaveBeenCalled();
  });
});

describe(isInstanceOp.name, () => {
  it('should know every op of the contract and nothing else', () => {
    expect(isInstanceOp('send')).toBe(true);
    expect(isInstanceOp('privacy.set')).toBe(true);
    expect(isInstanceOp('toString')).toBe(false);
    expect(isInstanceOp('send.everything')).toBe(false);
  });
});
