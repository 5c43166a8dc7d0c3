/**
 * Server-side printing, the columns `kubectl get` shows: the printers of kube-apiserver
 * (pkg/printers/internalversion) for the types the double serves, with their texts.
 */
import type { ColumnSpec } from './resources.js';
import { isRecord, type KubeObject } from './objects.js';

type Json = Record<string, unknown>;

const rec = (value: unknown): Json => (isRecord(value) ? value : {});
const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
const num = (value: unknown): number => (typeof value === 'number' ? value : 0);
const str = (value: unknown): string => (typeof value === 'string' ? value : '');

/** apimachinery's duration.HumanDuration. */
export function humanDuration(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`;
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) return hours % 24 === 0 ? `${Math.floor(hours / 24)}d` : `${Math.floor(hours / 24)}d${hours % 24}h`;
  if (hours < 24 * 365 * 2) return `${Math.floor(hours / 24)}d`;
  const days = Math.floor(hours / 24);
  if (hours < 24 * 365 * 8) return days % 365 === 0 ? `${Math.floor(days / 365)}y` : `${Math.floor(days / 365)}y${days % 365}d`;
  return `${Math.floor(days / 365)}y`;
}

/** translateTimestampSince: `<unknown>` for a missing time. */
export function since(timestamp: unknown, now: Date): string {
  if (typeof timestamp !== 'string' || timestamp === '') return '<unknown>';
  return humanDuration(now.getTime() - Date.parse(timestamp));
}

export const NAME_COLUMN: ColumnSpec = {
  name: 'Name',
  type: 'string',
  format: 'name',
  description: 'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names',
  cell: (o) => o.metadata?.name ?? '',
};

const AGE: ColumnSpec = {
  name: 'Age',
  type: 'string',
  description: 'CreationTimestamp is a timestamp representing the server time when this object was created.',
  cell: (o, now) => since(o.metadata?.creationTimestamp, now),
};

/** The default table (types without a printer): Name and Created At. */
export const DEFAULT_COLUMNS: readonly ColumnSpec[] = [
  NAME_COLUMN,
  { name: 'Created At', type: 'date', description: AGE.description, cell: (o) => o.metadata?.creationTimestamp ?? '' },
];

const column = (name: string, type: ColumnSpec['type'], cell: ColumnSpec['cell'], priority = 0): ColumnSpec => ({ name, type, priority, cell });

/** metav1.FormatLabelSelector; `none` for an empty selector. */
export function formatSelector(selector: unknown, none = '<none>'): string {
  const s = rec(selector);
  const parts = Object.entries(rec(s.matchLabels)).map(([k, v]) => `${k}=${String(v)}`);
  for (const e of list(s.matchExpressions).map(rec)) {
    const values = list(e.values).map(String).join(',');
    const op = str(e.operator);
    if (op === 'Exists') parts.push(str(e.key));
    else if (op === 'DoesNotExist') parts.push(`!${str(e.key)}`);
    else parts.push(`${str(e.key)} ${op === 'In' ? 'in' : 'notin'} (${values})`);
  }
  return parts.length === 0 ? none : parts.join(',');
}

const containersOf = (o: KubeObject): Json[] => list(rec(rec(rec(o.spec).template).spec).containers).map(rec);
const CONTAINERS = column('Containers', 'string', (o) => containersOf(o).map((c) => str(c.name)).join(','), 1);
const IMAGES = column('Images', 'string', (o) => containersOf(o).map((c) => str(c.image)).join(','), 1);
const SELECTOR = column('Selector', 'string', (o) => formatSelector(rec(o.spec).selector), 1);

/** printPod's STATUS: the phase, or the reason a container is waiting or terminated, or Terminating. */
function podStatus(pod: KubeObject): string {
  const status = rec(pod.status);
  let reason = str(status.reason) || str(status.phase);
  let hasRunning = false;
  for (const c of [...list(status.containerStatuses).map(rec)].reverse()) {
    const state = rec(c.state);
    const waiting = rec(state.waiting);
    const terminated = rec(state.terminated);
    if (str(waiting.reason) !== '') reason = str(waiting.reason);
    else if (isRecord(state.terminated)) {
      reason = str(terminated.reason) || (num(terminated.signal) !== 0 ? `Signal:${num(terminated.signal)}` : `ExitCode:${num(terminated.exitCode)}`);
    } else if (isRecord(state.running) && c.ready === true) hasRunning = true;
  }
  if (reason === 'Completed' && hasRunning) reason = 'Running';
  if (pod.metadata?.deletionTimestamp) reason = 'Terminating';
  return reason;
}

function podRestarts(pod: KubeObject, now: Date): string {
  const statuses = list(rec(pod.status).containerStatuses).map(rec);
  const restarts = statuses.reduce((sum, c) => sum + num(c.restartCount), 0);
  const last = statuses
    .map((c) => str(rec(rec(c.lastState).terminated).finishedAt))
    .filter((t) => t !== '')
    .sort()
    .at(-1);
  return last && restarts > 0 ? `${restarts} (${since(last, now)} ago)` : String(restarts);
}

function podReady(pod: KubeObject): string {
  const total = list(rec(pod.spec).containers).length;
  const ready = list(rec(pod.status).containerStatuses).map(rec).filter((c) => c.ready === true).length;
  return `${ready}/${total}`;
}

const noneIfEmpty = (text: string): string => (text === '' ? '<none>' : text);

export const POD_COLUMNS: readonly ColumnSpec[] = [
  NAME_COLUMN,
  column('Ready', 'string', podReady),
  column('Status', 'string', podStatus),
  column('Restarts', 'string', podRestarts),
  AGE,
  column('IP', 'string', (o) => noneIfEmpty(str(rec(o.status).podIP)), 1),
  column('Node', 'string', (o) => noneIfEmpty(str(rec(o.spec).nodeName)), 1),
  column('Nominated Node', 'string', () => '<none>', 1),
  column('Readiness Gates', 'string', () => '<none>', 1),
];

const specReplicas = (o: KubeObject): number => (typeof rec(o.spec).replicas === 'number' ? num(rec(o.spec).replicas) : 1);

export const DEPLOYMENT_COLUMNS: readonly ColumnSpec[] = [
  NAME_COLUMN,
  column('Ready', 'string', (o) => `${num(rec(o.status).readyReplicas)}/${specReplicas(o)}`),
  column('Up-to-date', 'integer', (o) => num(rec(o.status).updatedReplicas)),
  column('Available', 'integer', (o) => num(rec(o.status).availableReplicas)),
  AGE,
  CONTAINERS,
  IMAGES,
  SELECTOR,
];

export const REPLICASET_COLUMNS: readonly ColumnSpec[] = [
  NAME_COLUMN,
  column('Desired', 'integer', specReplicas),
  column('Current', 'integer', (o) => num(rec(o.status).replicas)),
  column('Ready', 'integer', (o) => num(rec(o.status).readyReplicas)),
  AGE,
  CONTAINERS,
  IMAGES,
  SELECTOR,
];

function servicePorts(o: KubeObject): string {
  const ports = list(rec(o.spec).ports).map(rec);
  if (ports.length === 0) return '<none>';
  return ports
    .map((p) => (num(p.nodePort) > 0 ? `${num(p.port)}:${num(p.nodePort)}/${str(p.protocol) || 'TCP'}` : `${num(p.port)}/${str(p.protocol) || 'TCP'}`))
    .join(',');
}

const mapText = (value: unknown): string => {
  const entries = Object.entries(rec(value)).sort(([a], [b]) => (a < b ? -1 : 1));
  return entries.length === 0 ? '<none>' : entries.map(([k, v]) => `${k}=${String(v)}`).join(',');
};

export const SERVICE_COLUMNS: readonly ColumnSpec[] = [
  NAME_COLUMN,
  column('Type', 'string', (o) => str(rec(o.spec).type) || 'ClusterIP'),
  column('Cluster-IP', 'string', (o) => noneIfEmpty(str(rec(o.spec).clusterIP))),
  column('External-IP', 'string', () => '<none>'),
  column('Port(s)', 'string', servicePorts),
  AGE,
  column('Selector', 'string', (o) => mapText(rec(o.spec).selector), 1),
];

function endpointsText(o: KubeObject): string {
  const all: string[] = [];
  for (const subset of list(o.subsets).map(rec)) {
    const ports = list(subset.ports).map(rec);
    for (const address of list(subset.addresses).map(rec)) {
      if (ports.length === 0) all.push(str(address.ip));
      for (const port of ports) all.push(`${str(address.ip)}:${num(port.port)}`);
    }
  }
  if (all.length === 0) return '<none>';
  return all.length > 3 ? `${all.slice(0, 3).join(',')} + ${all.length - 3} more...` : all.join(',');
}

export const ENDPOINTS_COLUMNS: readonly ColumnSpec[] = [NAME_COLUMN, column('Endpoints', 'string', endpointsText), AGE];

export const ENDPOINT_SLICE_COLUMNS: readonly ColumnSpec[] = [
  NAME_COLUMN,
  column('AddressType', 'string', (o) => str(o.addressType)),
  column('Ports', 'string', (o) => noneIfEmpty(list(o.ports).map((p) => String(num(rec(p).port))).join(','))),
  column('Endpoints', 'string', (o) => {
    const ips = list(o.endpoints).flatMap((e) => list(rec(e).addresses).map(String));
    return ips.length === 0 ? '<unset>' : ips.length > 3 ? `${ips.slice(0, 3).join(',')} + ${ips.length - 3} more...` : ips.join(',');
  }),
  AGE,
];

const dataCount = (o: KubeObject): number => Object.keys(rec(o.data)).length + Object.keys(rec(o.binaryData)).length;

export const CONFIGMAP_COLUMNS: readonly ColumnSpec[] = [NAME_COLUMN, column('Data', 'integer', dataCount), AGE];
export const SECRET_COLUMNS: readonly ColumnSpec[] = [NAME_COLUMN, column('Type', 'string', (o) => str(o.type)), column('Data', 'integer', dataCount), AGE];
export const SERVICE_ACCOUNT_COLUMNS: readonly ColumnSpec[] = [NAME_COLUMN, column('Secrets', 'integer', (o) => list(o.secrets).length), AGE];
export const NAMESPACE_COLUMNS: readonly ColumnSpec[] = [NAME_COLUMN, column('Status', 'string', (o) => str(rec(o.status).phase)), AGE];
export const LEASE_COLUMNS: readonly ColumnSpec[] = [NAME_COLUMN, column('Holder', 'string', (o) => str(rec(o.spec).holderIdentity)), AGE];
export const WEBHOOK_CONFIGURATION_COLUMNS: readonly ColumnSpec[] = [NAME_COLUMN, column('Webhooks', 'integer', (o) => list(o.webhooks).length), AGE];
export const ROLE_COLUMNS: readonly ColumnSpec[] = DEFAULT_COLUMNS;

const subjectsOf = (o: KubeObject, kind: string): string =>
  list(o.subjects)
    .map(rec)
    .filter((s) => str(s.kind) === kind)
    .map((s) => (kind === 'ServiceAccount' ? `${str(s.namespace)}/${str(s.name)}` : str(s.name)))
    .join(', ');

export const BINDING_COLUMNS: readonly ColumnSpec[] = [
  NAME_COLUMN,
  column('Role', 'string', (o) => `${str(rec(o.roleRef).kind)}/${str(rec(o.roleRef).name)}`),
  AGE,
  column('Users', 'string', (o) => subjectsOf(o, 'User'), 1),
  column('Groups', 'string', (o) => subjectsOf(o, 'Group'), 1),
  column('ServiceAccounts', 'string', (o) => subjectsOf(o, 'ServiceAccount'), 1),
];

const intOrStringText = (value: unknown): string => (value === undefined || value === null ? 'N/A' : String(value));

export const PDB_COLUMNS: readonly ColumnSpec[] = [
  NAME_COLUMN,
  column('Min Available', 'string', (o) => intOrStringText(rec(o.spec).minAvailable)),
  column('Max Unavailable', 'string', (o) => intOrStringText(rec(o.spec).maxUnavailable)),
  column('Allowed Disruptions', 'integer', (o) => num(rec(o.status).disruptionsAllowed)),
  AGE,
];

function eventObject(o: KubeObject): string {
  const involved = rec(o.involvedObject);
  return `${str(involved.kind).toLowerCase()}/${str(involved.name)}`;
}

const eventTime = (o: KubeObject): unknown => o.lastTimestamp ?? o.eventTime ?? o.metadata?.creationTimestamp;

export const EVENT_COLUMNS: readonly ColumnSpec[] = [
  column('Last Seen', 'string', (o, now) => since(eventTime(o), now)),
  column('Type', 'string', (o) => str(o.type)),
  column('Reason', 'string', (o) => str(o.reason)),
  column('Object', 'string', eventObject),
  column('Subobject', 'string', (o) => str(rec(o.involvedObject).fieldPath), 1),
  column('Source', 'string', (o) => str(rec(o.source).component), 1),
  column('Message', 'string', (o) => str(o.message)),
  column('First Seen', 'string', (o, now) => since(o.firstTimestamp, now), 1),
  column('Count', 'integer', (o) => num(o.count), 1),
  { ...NAME_COLUMN, priority: 1 },
];

export const NODE_COLUMNS: readonly ColumnSpec[] = [
  NAME_COLUMN,
  column('Status', 'string', (o) => (list(rec(o.status).conditions).map(rec).some((c) => c.type === 'Ready' && c.status === 'True') ? 'Ready' : 'NotReady')),
  column('Roles', 'string', () => '<none>'),
  AGE,
  column('Version', 'string', (o) => str(rec(rec(o.status).nodeInfo).kubeletVersion)),
];

export const CRD_COLUMNS: readonly ColumnSpec[] = ROLE_COLUMNS;

export { AGE as AGE_COLUMN };

export const ADMISSION_POLICY_COLUMNS: readonly ColumnSpec[] = [
  NAME_COLUMN,
  column('Validations', 'integer', (o) => list(rec(o.spec).validations).length),
  column('ParamKind', 'string', (o) => {
    const kind = rec(o.spec).paramKind;
    return isRecord(kind) ? `${str(kind.apiVersion)}/${str(kind.kind)}` : '<unset>';
  }),
  AGE,
];

export const ADMISSION_POLICY_BINDING_COLUMNS: readonly ColumnSpec[] = [
  NAME_COLUMN,
  column('PolicyName', 'string', (o) => str(rec(o.spec).policyName)),
  column('ParamRef', 'string', (o) => {
    const ref = rec(o.spec).paramRef;
    if (!isRecord(ref)) return '<unset>';
    if (str(ref.name) !== '') return `${str(ref.namespace) === '' ? '*' : str(ref.namespace)}/${str(ref.name)}`;
    // kube-apiserver prints the selector's Go struct text here; the double prints it as kubectl selectors read.
    return isRecord(ref.selector) ? formatSelector(ref.selector, '') : '<unset>';
  }),
  AGE,
];
