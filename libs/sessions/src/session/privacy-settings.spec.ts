import { ErrorCode, RpcError } from '@gw/contracts';
import { validatePrivacySettings } from './privacy-settings';

describe(validatePrivacySettings.name, () => {
  it('should accept the keys and values of the API', () => {
    expect(validatePrivacySettings({ groupadd: 'contacts', readreceipts: 'none', online: 'match_last_seen', calladd: 'known' })).toHaveLength(4);
  });

  it.each([[{}], [{ unknown: 'all' }], [{ readreceipts: 'contacts' }], [{ online: 'none' }]])('should refuse %j before sending anything', (settings) => {
    expect(() => validatePrivacySettings(settings)).toThrow(RpcError);
    try {
      validatePrivacySettings(settings);
    } catch (error) {
      expect((error as RpcError).code).toBe(ErrorCode.BadRequest);
    }
  });
});
