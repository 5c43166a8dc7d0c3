/**
 * kube-apiserver's typed `request` (k8s.io/apiserver/pkg/admission/plugin/cel/compile.go,
 * BuildRequestType): a field it does not declare (`request.usrInfo`, `request.uid`) is a
 * compile error there, and so here.
 */
import type { Environment } from '@marcbachmann/cel-js';

export const ADMISSION_REQUEST_TYPE = 'kubernetes.AdmissionRequest';

export function registerAdmissionTypes(env: Environment): void {
  env.registerType('kubernetes.GroupVersionKind', { fields: { group: 'string', version: 'string', kind: 'string' } });
  env.registerType('kubernetes.GroupVersionResource', { fields: { group: 'string', version: 'string', resource: 'string' } });
  env.registerType('kubernetes.UserInfo', { fields: { username: 'string', uid: 'string', groups: 'list<string>', extra: 'map<string, list<string>>' } });
  env.registerType(ADMISSION_REQUEST_TYPE, {
    fields: {
      kind: 'kubernetes.GroupVersionKind',
      resource: 'kubernetes.GroupVersionResource',
      subResource: 'string',
      requestKind: 'kubernetes.GroupVersionKind',
      requestResource: 'kubernetes.GroupVersionResource',
      requestSubResource: 'string',
      name: 'string',
      namespace: 'string',
      operation: 'string',
      userInfo: 'kubernetes.UserInfo',
      dryRun: 'bool',
      options: 'dyn',
    },
  });
}
