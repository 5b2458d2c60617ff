/** bench/instances's role, flags and small helpers (main.ts's header lists the flags). */
import { activityOptions } from './activity';

export type Role = 'orchestrate' | 'sim' | 'bare' | 'ours' | 'hibernated';

/** The simulator as the children are told it (the shared shape of bench/support). */
export type { SimInfo } from '../support/receivers';

const roleGiven = process.argv[2] !== undefined && !process.argv[2].startsWith('--');
export const role = (roleGiven ? process.argv[2] : 'orchestrate') as Role;
export const args = new Map<string, string>();
for (let i = roleGiven ? 3 : 2; i < process.argv.length; i += 2) {
  // A flag (`--activity`) takes no value.
  if (process.argv[i + 1] === undefined || process.argv[i + 1].startsWith('--')) {
    args.set(process.argv[i].replace(/^--/, ''), 'true');
    i--;
  } else args.set(process.argv[i].replace(/^--/, ''), process.argv[i + 1]);
}
export const N = Number(args.get('n') ?? 200);
export const HIBERNATED = Number(args.get('hibernated') ?? 0);
export const ACTIVITY = args.get('activity') === 'true' ? activityOptions(args) : undefined;

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function send(message: unknown): void {
  process.send?.(message);
}
