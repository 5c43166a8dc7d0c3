/**
 * Unknown-field detection for built-in Kubernetes types. The OpenAPI schemas accept unknown
 * fields, but `kubectl apply` asks kube-apiserver for strict field validation (the default since
 * kubectl 1.27) and a misspelt field fails the install. The field lists come from
 * @kubernetes/client-node's generated models (their attributeTypeMap), generated from the same
 * upstream OpenAPI document.
 */
import * as k8s from '@kubernetes/client-node';
import type { KubeObject } from './kube-object.js';

interface Attribute {
  baseName: string;
  type: string;
}

interface GeneratedModel {
  getAttributeTypeMap(): Attribute[];
}

const models = k8s as unknown as Record<string, unknown>;

function generatedModel(typeName: string): GeneratedModel | undefined {
  const candidate = models[typeName] as Partial<GeneratedModel> | undefined;
  return typeof candidate?.getAttributeTypeMap === 'function' ? (candidate as GeneratedModel) : undefined;
}

/** client-node's class for a top-level object: apps/v1 Deployment -> V1Deployment. */
function topLevelTypeName(object: KubeObject): string {
  const version = object.apiVersion.split('/').at(-1) ?? '';
  return `${version.charAt(0).toUpperCase()}${version.slice(1)}${object.kind}`;
}

/** True when client-node has a model for this object's type, so its fields can be checked. */
export function hasFieldList(object: KubeObject): boolean {
  return generatedModel(topLevelTypeName(object)) !== undefined;
}

/** Paths of fields that the type does not define, e.g. `spec.template.spec.containers[0].securityContext.readOnlyRootFileSystem`. */
export function unknownFields(object: KubeObject): string[] {
  const typeName = topLevelTypeName(object);
  if (!generatedModel(typeName)) throw new Error(`no field list for ${object.apiVersion} ${object.kind}`);
  return walk(object, typeName, '');
}

function walk(value: unknown, typeName: string, path: string): string[] {
  if (value === null || value === undefined) return [];
  const arrayElement = /^Array<(.+)>$/.exec(typeName);
  if (arrayElement) return Array.isArray(value) ? value.flatMap((item, i) => walk(item, arrayElement[1]!, `${path}[${i}]`)) : [];
  const mapValue = /^\{ \[key: string\]: (.+); \}$/.exec(typeName);
  if (mapValue) return isRecord(value) ? Object.entries(value).flatMap(([key, item]) => walk(item, mapValue[1]!, `${path}.${key}`)) : [];
  const model = generatedModel(typeName);
  if (!model || !isRecord(value)) return []; // primitives, IntOrString, free-form objects
  const attributes = new Map(model.getAttributeTypeMap().map((a) => [a.baseName, a.type]));
  return Object.entries(value).flatMap(([key, item]) => {
    const fieldPath = path === '' ? key : `${path}.${key}`;
    const fieldType = attributes.get(key);
    return fieldType === undefined ? [fieldPath] : walk(item, fieldType, fieldPath);
  });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
