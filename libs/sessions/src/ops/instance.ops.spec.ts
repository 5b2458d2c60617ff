import { ErrorCode } from '@gw/contracts';
import { parseConnectRequest } from './instance.ops';

describe(parseConnectRequest.name, () => {
  it('should keep a well-formed request', () => {
    expect(
      parseConnectRequest({ phone: '5511999999999', browser: 'edge', systemName: 'Shop', history: { days: 200, fullSync: true }, requestId: 'r1' }, 'i1'),
    ).toEqual({
      instanceId: 'i1',
      phone: '5511999999999',
      browser: 'edge',
      systemName: 'Shop',
      history: { days: 200, fullSync: true },
      requestId: 'r1',
    });
  });

  it('should default what is missing or out of range', () => {
    expect(parseConnectRequest({ browser: 'opera', history: { days: 900 } }, 'i1')).toMatchObject({
      browser: 'auto',
      history: { days: 90, fullSync: false },
      phone: undefined,
    });
  });

  it('should refuse a malformed phone', () => {
    expect(() => parseConnectRequest({ phone: '12ab' }, 'i1')).toThrow(expect.objectContaining({ code: ErrorCode.BadRequest }));
  });
});
