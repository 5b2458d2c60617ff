/** bench/chaos's role, flags, goals and small helpers (main.ts's header lists the flags). */
import type { SimInfo } from '../support/receivers';

export type Role = 'orchestrate' | 'sim' | 'gateway' | 'worker' | 'dispatcher';

/** The simulator as the children are told it (the shared shape of bench/support). */
export type { SimInfo };

export interface Setup {
  databaseUrl: string;
  schema: string;
  prefix: string;
  sim: SimInfo;
}

const roleGiven = process.argv[2] !== undefined && !process.argv[2].startsWith('--');
export const role = (roleGiven ? process.argv[2] : 'orchestrate') as Role;
export const args = new Map<string, string>();
for (let i = roleGiven ? 3 : 2; i < process.argv.length; i += 2) args.set(process.argv[i].replace(/^--/, ''), process.argv[i + 1]);
export const INSTANCES = Number(args.get('instances') ?? 20);
export const STORM = Number(args.get('storm-instances') ?? 1000);
export const INTERVAL_MS = Number(args.get('interval') ?? 1_000);
export const CAMPAIGN = Number(args.get('campaign') ?? 3);
export const SETTLE_MS = Number(args.get('settle') ?? 90_000);
export const MODE_GOAL_S = 30;
export const STORM_GOAL_S = 60;
export const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
export const log = (line: string) => process.stderr.write(`[chaos:${role}] ${line}\n`);
