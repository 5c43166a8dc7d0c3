import {
  Observable,
  type ConfigurationOptions,
  type ObservableMiddleware,
  type RequestContext,
  type ResponseContext,
} from '@kubernetes/client-node';
import { withTimeout } from '../util/abort.js';

/** Default bound of a single API request: the API server answers well within it or is in trouble. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 5000;

const resolved = <T>(value: T): Observable<T> => new Observable(Promise.resolve(value));

/** Per-call options that hand `signal` to the HTTP request, so aborting it cancels the socket. */
export function signalOptions(signal: AbortSignal): ConfigurationOptions {
  const middleware: ObservableMiddleware = {
    pre: (context: RequestContext) => {
      context.setSignal(signal);
      return resolved(context);
    },
    post: (context: ResponseContext) => resolved(context),
  };
  return { middleware: [middleware], middlewareMergeStrategy: 'append' };
}

/**
 * Runs one API call bounded by `timeoutMs` and `signal`: the request is aborted at the deadline,
 * and the promise settles then even if the library does not notice.
 */
export function callApi<T>(
  signal: AbortSignal | undefined,
  call: (options: ConfigurationOptions) => Promise<T>,
  timeoutMs = DEFAULT_REQUEST_TIMEOUT_MS,
): Promise<T> {
  return withTimeout(timeoutMs, signal, (bounded) => call(signalOptions(bounded)));
}
