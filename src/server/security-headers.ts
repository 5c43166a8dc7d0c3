/**
 * The response headers every answer of the webhook port carries, computed once at start by
 * helmet itself: helmet builds its middleware anew on every request when run per request (as
 * @fastify/helmet runs it), about 30% of admission throughput, for headers that never change.
 * helmet stays the source of truth; what it is asked for suits a JSON-only API that nothing
 * renders in a browser: a CSP that forbids everything, frames denied, and none of the headers
 * that only tune how a browser treats a page (each answer's bytes are encrypted and sent on every
 * review). Cache-Control is the server's own (helmet sets none): an answer must never be cached.
 */
import helmet from 'helmet';

const HELMET_OPTIONS = {
  contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
  xFrameOptions: { action: 'deny' },
  originAgentCluster: false,
  xDnsPrefetchControl: false,
  xDownloadOptions: false,
  xXssProtection: false,
} as const;

/** The headers helmet sets on a response, read off a stand-in that records them. */
function helmetHeaders(): Record<string, string> {
  const headers: Record<string, string> = {};
  const response = {
    setHeader: (name: string, value: unknown) => (headers[name.toLowerCase()] = String(value)),
    removeHeader: (name: string) => delete headers[name.toLowerCase()],
  };
  const middleware = helmet(HELMET_OPTIONS) as unknown as (request: object, response: object, next: (error?: unknown) => void) => void;
  middleware({}, response, (error) => {
    if (error) throw error;
  });
  return headers;
}

export const SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze({ ...helmetHeaders(), 'cache-control': 'no-store' });

/** SECURITY_HEADERS as a flat [name, value, ...] list, which node writes without per-reply bookkeeping. */
export const SECURITY_HEADER_LIST: readonly string[] = Object.freeze(Object.entries(SECURITY_HEADERS).flat());
