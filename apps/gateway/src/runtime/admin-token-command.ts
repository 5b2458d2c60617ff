/**
 * The command that rotates the admin token of this gateway's data: the sandbox keeps its own data dir
 * (./.data/sandbox), so plain `npm run admin-token` would rotate `npm start`'s token instead. `-s` keeps
 * npm's banner off stdout, so `ADMIN=$(…)` captures the token alone.
 */
export function adminTokenCommand(sandbox: boolean): string {
  return `npm run -s admin-token${sandbox ? ' -- --sandbox' : ''}`;
}
