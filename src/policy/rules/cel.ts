import { readCelProgram } from '../cel/cel-fields.js';
import { celDecision, runCelProgram } from '../cel/validation-program.js';
import { namespaceObjectName } from '../namespace-object.js';
import type { RuleKind } from '../rule-kind.js';
import type { AdmissionContext, AdmissionRequest, KubeObject } from '../types.js';

/**
 * The request's namespaceObject. The server's Namespace cache may not have a namespace created
 * moments ago (or may not have synced): then the rule cannot decide and says why, and the
 * webhook's failurePolicy answers (kube-apiserver would read the namespace from its own cache or
 * storage; this server makes no API call per review).
 */
function namespaceObjectFor(request: AdmissionRequest, context: AdmissionContext): KubeObject | null {
  if (context.namespaceObject !== undefined) return context.namespaceObject;
  const name = namespaceObjectName(request);
  if (name === undefined) return null;
  throw new Error(`namespace "${name}" is not in this server's Namespace cache (yet): namespaceObject cannot be read; answered by failurePolicy`);
}

/**
 * Rules written in CEL, shaped like a ValidatingAdmissionPolicy's spec: `variables` and
 * `validations` (expression, message, messageExpression, reason), with `object`, `oldObject`,
 * `request`, `params` (the entry's) and `namespaceObject`. Every expression is compiled once,
 * here; `rules` is required (there is no sensible default).
 */
export const celRule: RuleKind = {
  kind: 'cel',
  type: 'validating',
  ownFields: ['variables', 'validations'],
  compile(_params, entry, fields) {
    const read = readCelProgram(fields, entry);
    if (!read) return undefined;
    const { program, reads } = read;
    const readsNamespaceObject = reads.has('namespaceObject');
    return {
      type: 'validating',
      readsNamespaceObject,
      decide(request, context, mode, source) {
        const failures = runCelProgram(program, reads, request, readsNamespaceObject ? namespaceObjectFor(request, context) : null);
        return celDecision(failures, mode, source);
      },
    };
  },
};
