import { adminTokenCommand } from './admin-token-command';

describe('adminTokenCommand', () => {
  it('names the sandbox data dir for the sandbox, and keeps npm quiet so a script can capture the token', () => {
    expect(adminTokenCommand(true)).toBe('npm run -s admin-token -- --sandbox');
    expect(adminTokenCommand(false)).toBe('npm run -s admin-token');
  });
});
