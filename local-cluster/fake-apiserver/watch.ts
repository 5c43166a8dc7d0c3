/**
 * `?watch=true`: newline-delimited JSON events `{"type":"ADDED","object":{...}}` on a chunked 200.
 * resourceVersion unset or "0": synthetic ADDED for what exists, then changes. A specific
 * resourceVersion: the changes after it, or an ERROR event with 410 Expired when too old.
 * `sendInitialEvents=true` (a watch-list, as client-go's reflectors ask for it from kubectl 1.35
 * on, `kubectl wait` among them): ADDED for what exists, then a BOOKMARK carrying the snapshot's
 * resourceVersion and the `k8s.io/initial-events-end` annotation (a client waits for it before
 * it treats its list as complete), then changes. Ends on `timeoutSeconds`, on client close, and
 * when the server closes.
 */
import type { ServerResponse } from 'node:http';
import type { KubeObject } from './objects.js';
import { asServedVersion } from './custom-resource-types.js';
import { apiVersionOf, type ResourceName } from './resources.js';
import type { ApiTarget } from './routes.js';
import type { FieldError } from './field-errors.js';
import { invalid, statusBody, type StatusBody } from './status.js';
import type { ObjectStore, StoreEvent } from './store.js';
import { formatObject, type ReadFormat } from './tables.js';

export interface WatchStream {
  /** The store key it watches. */
  readonly resource: ResourceName;
  /** Ends the stream (server shutdown, its CRD deleted). */
  end(): void;
}

function eventLine(type: string, object: unknown): string {
  return `${JSON.stringify({ type, object })}\n`;
}

const INITIAL_EVENTS_END = 'k8s.io/initial-events-end';

/**
 * kube-apiserver's checks of a watch's list options (apimachinery's validateWatchOptions, the
 * WatchList feature on as it is by default), answered as it answers them: 422 on
 * `ListOptions.meta.k8s.io` listing every problem.
 */
export function watchOptionsProblem(query: URLSearchParams): StatusBody | undefined {
  const sendInitialEvents = query.get('sendInitialEvents');
  const match = query.get('resourceVersionMatch') ?? '';
  const errors: FieldError[] = [];
  if (sendInitialEvents !== null && match !== 'NotOlderThan') {
    errors.push({ type: 'Forbidden', field: 'resourceVersionMatch', detail: 'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan' });
  }
  if (match !== '') {
    if (sendInitialEvents === null) {
      errors.push({ type: 'Forbidden', field: 'resourceVersionMatch', detail: 'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided' });
    }
    if (match !== 'NotOlderThan') errors.push({ type: 'NotSupported', field: 'resourceVersionMatch', badValue: match, supported: ['NotOlderThan'] });
    if (query.get('allowWatchBookmarks') !== 'true') {
      errors.push({ type: 'Forbidden', field: 'allowWatchBookmarks', detail: 'allowWatchBookmarks must be set to true when sendInitialEvents is provided' });
    }
  }
  return errors.length > 0 ? invalid({ group: 'meta.k8s.io', kind: 'ListOptions' }, '', errors) : undefined;
}

export function startWatch(
  store: ObjectStore,
  target: ApiTarget,
  query: URLSearchParams,
  filter: (object: KubeObject) => boolean,
  response: ServerResponse,
  onEnd: () => void,
  format: ReadFormat = { as: 'object' },
): WatchStream {
  const inScope = (object: KubeObject): boolean =>
    (target.namespace === undefined || object.metadata?.namespace === target.namespace) && filter(object);
  response.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked', 'Cache-Control': 'no-cache' });
  response.flushHeaders();

  let ended = false;
  let timer: NodeJS.Timeout | undefined;
  let sentHeaders = false;
  // A Table watch sends the column definitions with the first event only.
  const encode = (object: KubeObject): KubeObject => {
    const encoded = formatObject(target.type, asServedVersion(target.type, object), format, query, sentHeaders);
    sentHeaders = true;
    return encoded;
  };
  const send = (event: StoreEvent): void => {
    if (!ended && event.resource === target.type.key && inScope(event.object)) {
      response.write(eventLine(event.type, encode(event.object)));
    }
  };
  const finish = (): void => {
    if (ended) return;
    ended = true;
    unsubscribe();
    if (timer) clearTimeout(timer);
    response.end();
    onEnd();
  };

  const requested = query.get('resourceVersion') ?? '';
  const since = Number(requested);
  const sendInitialEvents = query.get('sendInitialEvents');
  const sendSnapshot = (): void => {
    for (const object of store.list(target.type.key, target.namespace)) {
      if (inScope(object)) response.write(eventLine('ADDED', encode(object)));
    }
  };
  // Snapshot and subscription happen in one synchronous turn, so no change falls in between.
  if (sendInitialEvents === 'true') {
    // The snapshot is always the latest state, which satisfies NotOlderThan any resourceVersion.
    sendSnapshot();
    const bookmark = {
      kind: target.type.kind,
      apiVersion: apiVersionOf(target.type),
      metadata: { resourceVersion: String(store.currentRevision), annotations: { [INITIAL_EVENTS_END]: 'true' } },
    };
    response.write(eventLine('BOOKMARK', bookmark));
  } else if (sendInitialEvents === 'false' && (requested === '' || requested === '0')) {
    // "Start at most recent": changes from now on, nothing synthetic.
  } else if (requested === '' || requested === '0') {
    sendSnapshot();
  } else if (!Number.isInteger(since) || since < store.oldestWatchableRevision - 1) {
    const message = `too old resource version: ${requested} (${store.oldestWatchableRevision})`;
    response.end(eventLine('ERROR', statusBody({ status: 'Failure', message, reason: 'Expired', code: 410 })));
    onEnd();
    return { resource: target.type.key, end: () => undefined };
  } else {
    for (const event of store.eventsSince(target.type.key, since)) send(event);
  }
  const unsubscribe = store.subscribe(send);
  response.on('close', finish);

  const timeoutSeconds = Number(query.get('timeoutSeconds') ?? '');
  if (Number.isFinite(timeoutSeconds) && timeoutSeconds > 0) {
    timer = setTimeout(finish, timeoutSeconds * 1000);
    timer.unref();
  }
  return { resource: target.type.key, end: finish };
}
