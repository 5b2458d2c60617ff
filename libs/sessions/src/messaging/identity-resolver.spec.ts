import type { LidMappingRepository } from '@gw/persistence';
import type { Logger } from '@gw/platform';
import type { WASocket } from '../baileys';
import { IdentityResolver, LID_MISS_TTL_MS, userJid } from './identity-resolver';
import { jidNormalizedUser } from '../baileys';

const PN = '5511999990001@s.whatsapp.net';
const LID = '123456789012345@lid';

function resolverWith(lookups: { table: jest.Mock; baileys: jest.Mock }): IdentityResolver {
  const socket = { signalRepository: { lidMapping: { getLIDForPN: lookups.baileys, getPNForLID: jest.fn(async () => null) } } } as unknown as WASocket;
  const mappings = { lidForPn: lookups.table } as unknown as LidMappingRepository;
  const logger = { debug: jest.fn() } as unknown as Logger;
  return new IdentityResolver(socket, 'instance-1', mappings, logger);
}

describe('IdentityResolver.lidFor', () => {
  afterEach(() => jest.useRealTimers());

  it('asks once for a number whose LID nobody knows, not once per message (a history chunk of one chat)', async () => {
    const lookups = { table: jest.fn(async () => null), baileys: jest.fn(async () => null) };
    const resolver = resolverWith(lookups);
    for (let message = 0; message < 50; message++) expect(await resolver.lidFor(PN)).toBe('');
    expect(lookups.table).toHaveBeenCalledTimes(1);
    expect(lookups.baileys).toHaveBeenCalledTimes(1);
  });

  it('asks again once the miss is old, and finds what was learned since', async () => {
    jest.useFakeTimers({ now: 1_000_000 });
    const lookups = { table: jest.fn(async () => null as string | null), baileys: jest.fn(async () => null) };
    const resolver = resolverWith(lookups);
    expect(await resolver.lidFor(PN)).toBe('');
    jest.setSystemTime(1_000_000 + LID_MISS_TTL_MS + 1);
    lookups.table.mockResolvedValueOnce(LID);
    expect(await resolver.lidFor(PN)).toBe(LID);
    expect(lookups.table).toHaveBeenCalledTimes(2);
  });

  it('answers a pair WhatsApp revealed at once, even within the miss window', async () => {
    const lookups = { table: jest.fn(async () => null), baileys: jest.fn(async () => null) };
    const resolver = resolverWith(lookups);
    expect(await resolver.lidFor(PN)).toBe('');
    resolver.learn(LID, PN);
    expect(await resolver.lidFor(PN)).toBe(LID);
    expect(lookups.table).toHaveBeenCalledTimes(1);
  });
});

describe('IdentityResolver.me', () => {
  it("answers the account's own identities, normalised, and follows a change of them (a pairing, a LID learned)", () => {
    const socket = { user: { id: '5511999990001:7@s.whatsapp.net' } } as unknown as WASocket & { user: { id: string; lid?: string } };
    const resolver = new IdentityResolver(socket, 'instance-1', {} as LidMappingRepository, { debug: jest.fn() } as unknown as Logger);
    expect(resolver.me()).toEqual({ jid: PN, pn: PN, lid: '' });
    const first = resolver.me();
    first.jid = 'changed by a caller';
    expect(resolver.me()).toEqual({ jid: PN, pn: PN, lid: '' });
    socket.user.lid = '123456789012345:7@lid';
    expect(resolver.me()).toEqual({ jid: LID, pn: PN, lid: LID });
  });
});

describe('userJid', () => {
  it("answers as Baileys' jidNormalizedUser does, the second time from its table, and '' for nothing", () => {
    const jids = ['5511999990001:7@s.whatsapp.net', '123456789012345:7@lid', '120363000000000001@g.us', 'status@broadcast', 'not a jid', '@s.whatsapp.net'];
    for (const jid of jids) {
      expect(userJid(jid)).toBe(jidNormalizedUser(jid) || '');
      expect(userJid(jid)).toBe(jidNormalizedUser(jid) || '');
    }
    expect(userJid(undefined)).toBe('');
    expect(userJid('')).toBe('');
  });
});
