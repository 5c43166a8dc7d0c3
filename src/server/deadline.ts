import { parseDuration } from '../config/duration.js';

/** kube-apiserver sends a handful of distinct values (`10s`, `5s`...): parse each once. */
const parsedTimeouts = new Map<string, number | undefined>();
const MAX_CACHED = 64;

function parseTimeoutMs(text: string): number | undefined {
  if (parsedTimeouts.has(text)) return parsedTimeouts.get(text);
  const parsed = parseDuration(text);
  if (parsedTimeouts.size < MAX_CACHED) parsedTimeouts.set(text, parsed);
  return parsed;
}

/** Never wait longer than the largest timeoutSeconds kube-apiserver allows, whatever the query says. */
const MAX_TIMEOUT_MS = 30_000;

/**
 * How long the server may spend before it must answer: the caller's timeout minus a safety margin
 * for the response to travel back (10% of the timeout, at least 100 ms, at most 1 s, never more
 * than half the timeout). Past this point the answer is decided by failurePolicy.
 */
export function answerBudgetMs(timeoutMs: number): number {
  const margin = Math.min(Math.max(timeoutMs * 0.1, 100), 1000, timeoutMs / 2);
  return Math.max(0, Math.floor(timeoutMs - margin));
}

/**
 * The caller's timeout in milliseconds: `?timeout=` when it is a valid Go duration (kube-apiserver
 * always sends one), else the webhook's own timeoutSeconds.
 */
export function callerTimeoutMs(query: string | undefined, webhookTimeoutSeconds: number): number {
  const fromQuery = query === undefined ? undefined : parseTimeoutMs(query);
  const timeoutMs = fromQuery !== undefined && fromQuery > 0 ? fromQuery : webhookTimeoutSeconds * 1000;
  return Math.min(timeoutMs, MAX_TIMEOUT_MS);
}
