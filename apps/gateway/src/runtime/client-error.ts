import type { Socket } from 'node:net';
import { STATUS_CODES } from 'node:http';
import { ApiError } from '../common/api-error';

/**
 * What Node's HTTP parser refuses before any request exists (Fastify's `clientErrorHandler`: malformed
 * HTTP, a request line and headers over 16 KB, a request not received in time) as the catalogue's
 * `{error}`, not Fastify's `{error, message, statusCode}`. The connection is closed after the answer, as
 * Node and Fastify do: what follows on it cannot be parsed.
 */
export function clientErrorAnswer(error: { code?: string }): ApiError {
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') return new ApiError('request_timeout');
  if (error.code === 'HPE_HEADER_OVERFLOW') return new ApiError('headers_too_large');
  return ApiError.badRequest('Malformed HTTP request');
}

/** The raw answer written on the socket (there is no reply to send it through). */
export function clientErrorResponse(refused: ApiError): string {
  const body = JSON.stringify(refused.body());
  return (
    `HTTP/1.1 ${refused.status} ${STATUS_CODES[refused.status]}\r\n` +
    `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
  );
}

/** Fastify's `clientErrorHandler`: Node's `clientError` event of the server. */
export function answerClientError(error: Error & { code?: string }, socket: Socket): void {
  // A reset connection has nobody to answer; neither has one already destroyed.
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  // Not in the middle of a response already begun on this connection (a late timeout, say).
  const answering = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (socket.writable && !answering?.headersSent) socket.write(clientErrorResponse(clientErrorAnswer(error)));
  socket.destroy(error);
}
