/**
 * Error codes that travel across NATS as `{ code, message }`. Each edge maps them exhaustively to HTTP
 * status (see the gateway's exception filter); adding a code without mapping it fails to compile there.
 */
export const ErrorCode = {
  BadRequest: 'bad_request',
  NotFound: 'not_found',
  /** The instance lacks the rights (e.g. it is not an admin of the group). */
  Forbidden: 'forbidden',
  Conflict: 'conflict',
  /** WhatsApp answered the request with an error (e.g. refused an app-state patch). */
  Refused: 'refused',
  NoSession: 'no_session',
  NotConnected: 'not_connected',
  Timeout: 'timeout',
  Fenced: 'fenced',
  CapacityExhausted: 'capacity_exhausted',
  Internal: 'internal',
  /** What the request carries (or points at) is larger than the operation takes (e.g. a picture). */
  TooLarge: 'too_large',
  /** What the request carries is not of a type the operation takes (e.g. a group picture that is no image). */
  UnsupportedMedia: 'unsupported_media',
  /**
   * WhatsApp limits the account now (the reach-out timelock, error 463; the new-chat message cap, error
   * 475): the message names the limit and its end. The async queue holds such a send until then.
   */
  Limited: 'limited',
  /** The session worker's database did not answer (a failover under way): the operation may not have completed. */
  Unavailable: 'unavailable',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** The error body every reply may carry instead of a result. */
export interface RpcErrorBody {
  code: ErrorCode;
  message: string;
  /** The request was refused before its op started (nobody subscribed, or a holder handing the instance over): trying it again is safe. */
  notRun?: true;
}

/** Thrown on either side of the bus; serialised as RpcErrorBody. */
export class RpcError extends Error {
  /** See RpcErrorBody.notRun: the op never started anywhere, so any op may be tried again (issue #39). */
  readonly notRun: boolean;

  constructor(
    readonly code: ErrorCode,
    message: string,
    options: { notRun?: boolean } = {},
  ) {
    super(message);
    this.name = 'RpcError';
    this.notRun = options.notRun === true;
  }

  toBody(): RpcErrorBody {
    return { code: this.code, message: this.message, ...(this.notRun ? { notRun: true as const } : {}) };
  }

  static fromBody(body: RpcErrorBody): RpcError {
    return new RpcError(body.code, body.message, { notRun: body.notRun === true });
  }
}

export function isRpcErrorBody(value: unknown): value is RpcErrorBody {
  return typeof value === 'object' && value !== null && typeof (value as RpcErrorBody).code === 'string' && typeof (value as RpcErrorBody).message === 'string';
}

export function assertUnreachable(value: never): never {
  throw new Error(`unreachable: ${String(value)}`);
}
