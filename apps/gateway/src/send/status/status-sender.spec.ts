import { ErrorCode, RpcError } from '@gw/contracts';
import type { ContactRepository, ContactRow, LidMappingRepository } from '@gw/persistence';
import { ApiError } from '../../common/api-error';
import type { SessionClient } from '../../session/session.client';
import type { SendContentTools } from '../send-content-tools';
import type { SendRequester } from '../send-requester';
import { StatusAudience } from './status-audience';
import { StatusSender } from './status-sender';
import type { RequestInstance } from '../../common/request-instance';

/** The status audience cannot be read from the phone: nothing may be sent (guessing could reach excluded contacts). */
describe('StatusSender when the status audience cannot be read', () => {
  const instance = { id: 'r1', token: 't', name: 'stories' } as RequestInstance;
  const saved: ContactRow[] = [
    {
      instanceId: 'r1',
      jid: '5511900000001@s.whatsapp.net',
      lid: '',
      contactName: 'Ana',
      pushName: '',
      verifiedName: '',
      inAddressBook: true,
      updatedAt: new Date(0),
    },
  ];
  const setup = (failure: Error) => {
    const send = jest.fn();
    const sessions = { request: jest.fn(async () => Promise.reject(failure)) } as unknown as SessionClient;
    const contacts = { listAll: jest.fn(async () => saved) } as unknown as ContactRepository;
    const lids = { pnForLid: jest.fn(async () => null) } as unknown as LidMappingRepository;
    const audience = new StatusAudience(contacts, lids, sessions);
    return { sut: new StatusSender(audience, {} as SendContentTools, { send } as unknown as SendRequester), send };
  };

  it('should answer 502 and send nothing when WhatsApp answered with an error', async () => {
    const { sut, send } = setup(new RpcError(ErrorCode.Internal, 'iq error 500'));
    const error = await sut.sendStatus(instance, { type: 'text', text: 'oi' } as never).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 502, message: 'could not read the status audience from WhatsApp (iq error 500); the status was not sent' });
    expect(send).not.toHaveBeenCalled();
  });

  it('should pass on the session errors the gateway maps itself (no session, no answer in time)', async () => {
    for (const code of [ErrorCode.NotConnected, ErrorCode.Timeout]) {
      const { sut, send } = setup(new RpcError(code, 'x'));
      await expect(sut.sendStatus(instance, { type: 'text', text: 'oi' } as never)).rejects.toMatchObject({ code });
      expect(send).not.toHaveBeenCalled();
    }
  });
});
