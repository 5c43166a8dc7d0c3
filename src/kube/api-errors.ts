/** Classifies failures of @kubernetes/client-node calls by the Status the API server sent. */

export interface ApiFailure {
  /** HTTP code, or 0 when no response arrived (network, timeout, abort). */
  code: number;
  reason: string;
  message: string;
  retryAfterSeconds?: number;
}

interface ApiExceptionLike {
  code: number;
  body?: unknown;
  headers?: Record<string, string>;
  message?: string;
}

/** A request deadline or an abort: no answer came. (A DOMException has a numeric legacy `code` too: 23, 20.) */
const isNoAnswer = (error: unknown): boolean => error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');

function isApiException(error: unknown): error is ApiExceptionLike {
  return typeof error === 'object' && error !== null && typeof (error as { code?: unknown }).code === 'number' && !isNoAnswer(error);
}

interface StatusBody {
  reason?: string;
  message?: string;
  details?: { retryAfterSeconds?: unknown };
}

function parseStatusBody(body: unknown): StatusBody {
  if (typeof body === 'string') {
    try {
      return JSON.parse(body) as StatusBody;
    } catch {
      return { message: body.slice(0, 200) };
    }
  }
  return typeof body === 'object' && body !== null ? (body as StatusBody) : {};
}

/** Longest Retry-After honoured: a server asking for more is asked again after this. */
export const MAX_RETRY_AFTER_MS = 60_000;

export function describeApiFailure(error: unknown): ApiFailure {
  if (isApiException(error)) {
    const status = parseStatusBody(error.body);
    // The header, as client-go reads it; kube-apiserver's Status carries the same in details.
    const retryAfter = Number(error.headers?.['retry-after'] ?? status.details?.retryAfterSeconds);
    return {
      code: error.code,
      reason: status.reason ?? `HTTP${error.code}`,
      message: status.message ?? error.message ?? `HTTP ${error.code}`,
      ...(Number.isFinite(retryAfter) && retryAfter > 0 ? { retryAfterSeconds: retryAfter } : {}),
    };
  }
  const message = error instanceof Error ? error.message : String(error);
  const reason = isNoAnswer(error) ? (error as Error).name : 'NetworkError';
  return { code: 0, reason, message };
}

export const isNotFound = (error: unknown): boolean => describeApiFailure(error).code === 404;
export const isConflict = (error: unknown): boolean => describeApiFailure(error).code === 409;
/** 403: RBAC refused. After this process was allowed before, its rights were taken away (an uninstall deletes the Role beside the Deployment). */
export const isForbidden = (error: unknown): boolean => describeApiFailure(error).code === 403;

/** Failures worth another attempt: no answer, conflicts, throttling and server errors. */
export function isRetryable(error: unknown): boolean {
  const { code, reason } = describeApiFailure(error);
  if (reason === 'AbortError') return false;
  return code === 0 || code === 409 || code === 429 || code >= 500;
}

/** What the API server asked to wait before the next attempt (429 or 5xx with Retry-After), capped at MAX_RETRY_AFTER_MS. */
export function retryAfterMs(error: unknown): number | undefined {
  const cause = error instanceof Error && error.cause !== undefined && !isApiException(error) ? error.cause : error;
  const { code, retryAfterSeconds } = describeApiFailure(cause);
  if (retryAfterSeconds === undefined || (code !== 429 && code < 500)) return undefined;
  return Math.min(retryAfterSeconds * 1000, MAX_RETRY_AFTER_MS);
}

/** One line for logs: `409 Conflict: the object has been modified...`. */
export function formatApiFailure(error: unknown): string {
  const { code, reason, message } = describeApiFailure(error);
  return code === 0 ? `${reason}: ${message}` : `${code} ${reason}: ${message}`;
}

/** The object, or undefined when the API says 404: "absent" is an answer, not a failure. */
export async function readOrUndefined<T>(read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await read();
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}
