import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { WebhookType } from '../admission/types.js';
import { BODY_LIMIT_BYTES, parseJsonBody } from './request-errors.js';
import type { ReviewCall, RouteReply } from './review-reply.js';

/**
 * A webhook path as kube-apiserver calls it: `/validate|mutate/<name>[/<members>]`, at most
 * `?timeout=<duration>` after it, no percent-encoding (fastify would decode it).
 */
const PLAIN_REVIEW_URL = /^\/(validate|mutate)\/([a-z0-9-]+)(?:\/([a-z0-9.-]+))?(?:\?timeout=([0-9a-z.]*))?$/;

export interface ReviewLaneOptions {
  /** The longest URL taken here (fastify's route parameter limit); longer ones go to fastify, which enforces that limit. */
  maxUrlLength: number;
  /** With --client-ca, a connection whose certificate the handshake did not verify goes to fastify's gate. */
  clientCertificatesRequired: boolean;
  answer(call: ReviewCall): RouteReply | Promise<RouteReply>;
  /** The reply to a body that is no JSON, or to an unexpected error: the one fastify's error handler gives. */
  answerError(error: unknown, request: IncomingMessage): RouteReply;
  write(response: ServerResponse, reply: RouteReply): void;
}

/**
 * kube-apiserver's calls, read and answered on node's request itself. fastify's routing, its
 * request and reply objects and its body parser cost the mutate route about 15% of its throughput
 * (measured: `git log -p BENCHMARKS.md`), for calls that never need them. Only a call that fastify would hand to the
 * review route unchanged is taken: a POST to a plain webhook path, `Content-Type:
 * application/json` as kube-apiserver sends it, a `Content-Length` within the body limit, and with
 * --client-ca a verified client certificate. Everything else (other methods, paths, media types,
 * chunked or oversized bodies) returns false and goes to fastify, which answers it as before.
 */
export function reviewLane(options: ReviewLaneOptions): (request: IncomingMessage, response: ServerResponse) => boolean {
  return (request, response) => {
    const call = plainReviewCall(request, options);
    if (call === undefined) return false;
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => {
      body += chunk;
    });
    // A caller that goes away mid-body never gets here: node ends the request without 'end' (and
    // without an 'error' nobody listens to) and destroys the response with the socket.
    request.on('end', () => answerBody(options, request, response, call, body));
    return true;
  };
}

function plainReviewCall(request: IncomingMessage, options: ReviewLaneOptions): Omit<ReviewCall, 'body'> | undefined {
  if (request.method !== 'POST' || request.headers['content-type'] !== 'application/json') return undefined;
  const url = request.url ?? '';
  if (url.length > options.maxUrlLength) return undefined;
  const length = request.headers['content-length'];
  if (length === undefined || Number(length) > BODY_LIMIT_BYTES) return undefined;
  if (options.clientCertificatesRequired && !(request.socket as TLSSocket).authorized) return undefined;
  const match = PLAIN_REVIEW_URL.exec(url);
  if (match === null) return undefined;
  const type: WebhookType = match[1] === 'validate' ? 'validating' : 'mutating';
  const [, , name = '', members, timeout] = match;
  return members === undefined ? { type, name, timeout } : { type, name, members, timeout };
}

function answerBody(options: ReviewLaneOptions, request: IncomingMessage, response: ServerResponse, call: Omit<ReviewCall, 'body'>, body: string): void {
  let reply: RouteReply | Promise<RouteReply>;
  try {
    reply = options.answer({ ...call, body: parseJsonBody(body) });
  } catch (error) {
    reply = options.answerError(error, request);
  }
  if (!(reply instanceof Promise)) {
    options.write(response, reply);
    return;
  }
  reply.then(
    (settled) => options.write(response, settled),
    (error: unknown) => options.write(response, options.answerError(error, request)),
  );
}
