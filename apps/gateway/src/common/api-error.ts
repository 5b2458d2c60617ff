import { ErrorCode, assertUnreachable } from '@gw/contracts';

/**
 * The HTTP edge's closed catalogue of errors. Every error the API answers is one of these kinds: its
 * status, the message uazapiGO answers when the thrower gives none, and the `code` uazapi adds to the
 * body where it has one. `satisfies` makes a kind without an entry a compile error, as the bus codes'
 * map to statuses already is (`rpcErrorKind` below).
 */
export const API_ERRORS = {
  /** A body, query or path value the route cannot accept (a DTO rule, or a rule only the service can check). */
  invalid_request: { status: 400, message: 'Invalid request payload' },
  /** The same, on the routes where uazapi adds a machine-readable code to the body (quick replies). */
  validation_failed: { status: 400, message: 'Invalid request payload', code: 'validation_failed' },
  /** The `token` header names no instance. */
  invalid_token: { status: 401, message: 'Invalid token' },
  /** The `admintoken` header is not the operator's token. */
  invalid_admin_token: { status: 403, message: 'Invalid AdminToken Header' },
  /** The caller may not do this (e.g. not a group admin). */
  forbidden: { status: 403, message: 'Forbidden' },
  /** What the request names does not exist (a message, a campaign, a file, a route). */
  not_found: { status: 404, message: 'Not found' },
  /** The instance's state forbids it now (already exists, not connected, no session, queue not drained). */
  conflict: { status: 409, message: 'Conflict' },
  /** The path takes other methods (/mcp: POST only, its server keeps no session to stream or end). */
  method_not_allowed: { status: 405, message: 'Method not allowed' },
  /** The body is larger than the route takes. */
  payload_too_large: { status: 413, message: 'Request body too large' },
  /** The body is not JSON. */
  unsupported_media_type: { status: 415, message: 'Content-Type must be application/json' },
  /** The request did not arrive whole in time (Node's headersTimeout/requestTimeout); the connection is closed. */
  request_timeout: { status: 408, message: 'The request was not received in time' },
  /** The request line and headers are over Node's limit (16 KB); the connection is closed. */
  headers_too_large: { status: 431, message: 'Request headers too large' },
  /** The token sent more requests than its limit allows; the answer carries Retry-After. */
  rate_limited: { status: 429, message: 'Too many requests' },
  /** WhatsApp limits the account now (reach-out timelock 463, new-chat cap 475): the error names the limit and its end. */
  whatsapp_limited: { status: 429, message: 'WhatsApp limits this account for now' },
  /** WhatsApp refused what the instance sent (an error ack or a refused IQ). */
  whatsapp_refused: { status: 502, message: 'WhatsApp refused the request' },
  /** A dependency other than WhatsApp failed (the phone did not answer a query it must answer). */
  upstream_failed: { status: 502, message: 'Upstream failure' },
  /** No session worker can take the instance now (none running, all full, a lease moving): the answer carries Retry-After (uazapi 2.1.1's 503 of /instance/connect). */
  unavailable: { status: 503, message: 'Service unavailable', retryAfterSeconds: 5 },
  /** The session worker did not answer in time. */
  timeout: { status: 504, message: 'Session worker did not answer in time' },
  /** A bug: logged with the request id, never described to the client. */
  internal: { status: 500, message: 'Internal server error' },
  // Last, so a bare status (kindOfStatus in error.filter.ts) finds the general kind first.
  /** A quick reply the instance does not have (the quick-reply routes give every error a `code`). */
  quick_reply_not_found: { status: 404, message: 'Quick reply not found', code: 'not_found' },
  /** A missing or wrong `token` on `GET /quick-replies/{id}`, whose 401 is `{code: 401, message, data}` instead of `{error}`. */
  invalid_token_coded: { status: 401, message: 'Invalid token', shape: 'code_message_data' },
} as const satisfies Record<string, { status: number; message: string; code?: string; shape?: 'code_message_data'; retryAfterSeconds?: number }>;

export type ApiErrorKind = keyof typeof API_ERRORS;

/** An error the API answers with `{error}` (plus the kind's `code` and any `extra` fields), never with a stack trace. */
export class ApiError extends Error {
  readonly status: number;

  constructor(
    readonly kind: ApiErrorKind,
    message: string = API_ERRORS[kind].message,
    /** Extra top-level fields of the error body (e.g. `instanceId`, `stats`, `debug`). */
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'ApiError';
    this.status = API_ERRORS[kind].status;
  }

  /** The body sent: `{error}`, the catalogue's `code` where uazapi has one, then the extra fields (`{code, message, data}` for a kind of that shape). */
  body(): Record<string, unknown> {
    const entry = API_ERRORS[this.kind] as { code?: string; shape?: string };
    if (entry.shape === 'code_message_data') return { code: this.status, message: this.message, data: this.extra };
    return { error: this.message, ...(entry.code ? { code: entry.code } : {}), ...this.extra };
  }

  static badRequest(message: string, extra?: Record<string, unknown>): ApiError {
    return new ApiError('invalid_request', message, extra);
  }

  static notFound(message: string): ApiError {
    return new ApiError('not_found', message);
  }

  static conflict(message: string, extra?: Record<string, unknown>): ApiError {
    return new ApiError('conflict', message, extra);
  }

  /** What a send (or any request needing the session) answers for a hibernated instance. */
  static hibernated(): ApiError {
    return new ApiError('conflict', 'Instance is hibernated: wake it with POST /instance/connect (no QR code needed)', { status: 'hibernated' });
  }

  static invalidToken(): ApiError {
    return new ApiError('invalid_token');
  }

  /**
   * A send or message action that WhatsApp refused (its Message record came back `Failed`): the one
   * place that decides how a refusal looks. 502 (the upstream's answer, not ours) with the record's
   * error, prefixed by what failed when the caller names it; `provider_code` is WhatsApp's error
   * number when the ack carried one; the record stays findable by `id` / `messageid`.
   */
  static refused(record: { id?: unknown; messageid?: unknown; error?: unknown }, failure?: string): ApiError {
    const detail = String(record.error || 'WhatsApp refused the request');
    const code = /error (\d{3})/.exec(detail)?.[1];
    return new ApiError('whatsapp_refused', failure ? `${failure}: ${detail}` : detail, {
      error_source: 'whatsapp_server',
      provider: 'whatsapp',
      ...(code ? { provider_code: Number(code) } : {}),
      id: record.id,
      messageid: record.messageid,
    });
  }
}

/** Bus error codes as catalogue kinds; a new bus code without a kind fails to compile. */
export function rpcErrorKind(code: ErrorCode): ApiErrorKind {
  switch (code) {
    case ErrorCode.BadRequest:
      return 'invalid_request';
    case ErrorCode.NotFound:
      return 'not_found';
    case ErrorCode.Forbidden:
      return 'forbidden';
    // The instance has no live session: a state conflict the client resolves by connecting.
    case ErrorCode.Conflict:
    case ErrorCode.NoSession:
    case ErrorCode.NotConnected:
      return 'conflict';
    case ErrorCode.Timeout:
      return 'timeout';
    case ErrorCode.Refused:
      return 'whatsapp_refused';
    case ErrorCode.Limited:
      return 'whatsapp_limited';
    case ErrorCode.CapacityExhausted:
    case ErrorCode.Fenced:
    case ErrorCode.Unavailable:
      return 'unavailable';
    case ErrorCode.Internal:
      return 'internal';
    case ErrorCode.TooLarge:
      return 'payload_too_large';
    case ErrorCode.UnsupportedMedia:
      return 'unsupported_media_type';
    default:
      return assertUnreachable(code);
  }
}

/** What the client reads for a bus error: uazapi's wording where it has one, else the worker's own message. */
export function rpcErrorMessage(code: ErrorCode, message: string): string {
  switch (code) {
    case ErrorCode.NoSession:
      return 'No session';
    case ErrorCode.Timeout:
      return 'Session worker did not answer in time';
    case ErrorCode.CapacityExhausted:
      return 'No session worker has capacity for this instance';
    case ErrorCode.Fenced:
      return 'Session is moving to another worker, try again';
    case ErrorCode.Internal:
      return 'Internal server error';
    case ErrorCode.BadRequest:
    case ErrorCode.NotFound:
    case ErrorCode.Forbidden:
    case ErrorCode.Conflict:
    case ErrorCode.NotConnected:
    case ErrorCode.Refused:
    case ErrorCode.TooLarge:
    case ErrorCode.UnsupportedMedia:
    case ErrorCode.Limited:
    case ErrorCode.Unavailable:
      return message;
    default:
      return assertUnreachable(code);
  }
}
