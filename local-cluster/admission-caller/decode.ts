/** Turning an HTTP reply into an AdmissionReview, or into client-go's error text (contract 2.1). */
import { parse as parseYaml } from 'yaml';
import { isRecord } from '../fake-apiserver/objects.js';
import type { HttpReply } from './transport.js';

/** A failed call: what follows "failed to call webhook: ". */
export class CallFailure extends Error {}

const GENERIC_MESSAGES: Record<number, string> = {
  400: 'the server rejected our request for an unknown reason',
  401: 'the server has asked for the client to provide credentials',
  404: 'the server could not find the requested resource',
  405: 'the server does not allow this method on the requested resource',
  409: 'the server reported a conflict',
  422: 'the server rejected our request due to an error in our request',
  429: 'the server has received too many requests and has asked us to try again later',
  503: 'the server is currently unable to handle the request',
  504: 'the server was unable to return a response in the time allotted, but may still be processing the request',
};

/** NewGenericServerResponse: the text client-go makes of a non-2xx reply that is not a Status. */
function genericServerMessage(status: number, serverMessage: string): string {
  if (status === 403 || status === 415) return serverMessage;
  if (status === 406) {
    return serverMessage === '' || serverMessage === 'unknown'
      ? 'the server was unable to respond with a content type that the client supports'
      : serverMessage;
  }
  const known = GENERIC_MESSAGES[status];
  if (known) return known;
  if (status >= 500) return `an error on the server (${JSON.stringify(serverMessage)}) has prevented the request from succeeding`;
  return `the server responded with the status code ${status} but did not return more information`;
}

function parseBody(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (jsonError) {
    // The webhook client's universal decoder also reads YAML.
    try {
      const parsed: unknown = parseYaml(text);
      if (isRecord(parsed)) return parsed;
    } catch {
      // fall through to the JSON error
    }
    throw new CallFailure(`couldn't get version/kind; json parse error: ${(jsonError as Error).message}`);
  }
}

export function decodeReply(reply: HttpReply): unknown {
  const text = reply.body.toString('utf8');
  const contentType = String(reply.headers['content-type'] ?? '');
  if (reply.status < 200 || reply.status > 206) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    if (isRecord(parsed) && parsed.kind === 'Status' && parsed.status === 'Failure') {
      throw new CallFailure(typeof parsed.message === 'string' ? parsed.message : '');
    }
    const serverMessage = contentType.startsWith('text/') ? text.trim() : '';
    throw new CallFailure(genericServerMessage(reply.status, serverMessage));
  }
  if (reply.body.length === 0) {
    throw new CallFailure(`0-length response with status code: ${reply.status} and content type: ${contentType}`);
  }
  return parseBody(text);
}
