// Public surface of the session worker. Internals (Session, LeaseKeeper, auth store…) are exported
// only where an embedder or an extension needs them.
export { SessionWorkerModule, SESSION_WORKER } from './session-worker.module';
export { drainBudgetMs, SessionWorker, sessionWorkerRepositories, SHUTDOWN_DEADLINE_MS } from './session-worker';
export type { SessionWorkerOptions, SessionWorkerRepositories } from './session-worker';
export { readSessionWorkerConfig, sessionWorkerConfig, SESSION_WORKER_DEFAULTS } from './config/session-worker.config';
export type { SessionWorkerConfig, SimulatorSeam } from './config/session-worker.config';
export { SESSION_WORKERS_QUEUE } from './bus/session-rpc.server';
export type { OpHandler, OpHandlers, OpRegistry } from './ops/op-handler';
export type { Session, SessionPhase } from './session/session';
export type { SocketContext, SocketObserver } from './session/socket-observer';
export { PostgresAuthState } from './auth-state/postgres-auth-state';
export { LeaseKeeper } from './lease/lease-keeper';
