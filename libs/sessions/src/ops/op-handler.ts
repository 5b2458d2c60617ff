import { ErrorCode, RpcError, type InstanceOp, type InstanceRpc } from '@gw/contracts';
import type { Session } from '../session/session';

/** Answers one `instance.<id>.<op>` request on the held session, typed from the contract's op map. */
export type OpHandler<Op extends InstanceOp> = (session: Session, request: InstanceRpc[Op]['request']) => Promise<InstanceRpc[Op]['reply']>;

/** The handlers of some ops (one op family). */
export type OpHandlers<Ops extends InstanceOp> = { [Op in Ops]: OpHandler<Op> };

/** Every op the worker answers: a missing or mistyped one is a compile error. */
export type OpRegistry = OpHandlers<InstanceOp>;

/**
 * Turns what arrived over the bus (a JSON object, unchecked) into the op's request, or throws
 * BadRequest. The gateway validated the HTTP body already; this is the worker's own defence.
 * `instanceId` is the one of the subject (the held session).
 */
export type OpRequestParser<Op extends InstanceOp> = (raw: Record<string, unknown>, instanceId: string) => InstanceRpc[Op]['request'];

export type OpRequestParsers<Ops extends InstanceOp> = { [Op in Ops]: OpRequestParser<Op> };

/** A bus payload as an object, or BadRequest. */
export function asObject(value: unknown): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new RpcError(ErrorCode.BadRequest, 'request must be an object');
  return value as Record<string, unknown>;
}
