import { noNats } from './services';

describe('a test run without NATS', () => {
  it('should let suites that need NATS skip themselves on a developer machine', () => {
    const write = jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
    expect(noNats({})).toBeNull();
    expect(write).toHaveBeenCalledWith(expect.stringContaining('skipped'));
    write.mockRestore();
  });

  it('should fail them in CI and when REQUIRE_NATS=1, instead of passing having tested nothing', () => {
    expect(() => noNats({ CI: 'true' })).toThrow(/NATS is required here \(CI=true\)/);
    expect(() => noNats({ REQUIRE_NATS: '1' })).toThrow(/REQUIRE_NATS=1/);
  });
});
