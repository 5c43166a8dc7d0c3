import type { IncomingMessage } from 'node:http';
import type { Logger } from 'pino';
import { errorBody, type ReviewAnswer } from './review/review.js';

/** The reply for a request that never became a review: HTTP status and a message saying what is wrong. */
export interface RequestError {
  statusCode: number;
  message: string;
}

/** 7 MiB: well above kube-apiserver's 3 MiB object limit plus the review envelope around it. */
export const BODY_LIMIT_BYTES = 7 * 1024 * 1024;

interface FastifyLikeError {
  code?: string;
  statusCode?: number;
  message?: string;
}

/** Rewrites fastify's generic errors into messages a caller can act on. */
export function describeRequestError(error: unknown, contentType: string | undefined): RequestError {
  const e = (typeof error === 'object' && error !== null ? error : {}) as FastifyLikeError;
  switch (e.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return {
        statusCode: 415,
        message: `Content-Type must be application/json, got ${JSON.stringify(contentType ?? '(none)')}`,
      };
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { statusCode: 413, message: `body is larger than the ${BODY_LIMIT_BYTES / 1024 / 1024} MiB limit` };
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return { statusCode: 400, message: 'body is empty: an AdmissionReview is expected' };
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return { statusCode: 400, message: 'Content-Length does not match the body' };
  }
  const statusCode = typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 600 ? e.statusCode : 500;
  const message = statusCode < 500 && e.message ? e.message : 'internal error while handling the request';
  return { statusCode, message };
}

/**
 * The answer to a request that failed before or outside its review (fastify's error handler and
 * alike): what describeRequestError says, logged as the caller's fault (4xx) or
 * the server's (5xx, with the cause).
 */
export function requestErrorReply(logger: Logger, error: unknown, request: IncomingMessage): ReviewAnswer {
  const described = describeRequestError(error, request.headers['content-type']);
  const log = { method: request.method, url: request.url, statusCode: described.statusCode, error: described.message };
  // A caller that went away mid-body (kube-apiserver's own deadline) failed nothing of the server's.
  if (request.socket.destroyed) logger.debug(log, 'the caller went away before its request was read');
  else if (described.statusCode >= 500) logger.error({ ...log, cause: (error as Error).message }, 'request failed');
  else logger.warn(log, 'bad admission request');
  return { statusCode: described.statusCode, body: errorBody(described.message) };
}
