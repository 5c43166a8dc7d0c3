/**
 * Server-side field validation (`?fieldValidation=Strict|Warn|Ignore`, what `kubectl apply`
 * sends): unknown fields fail the request as kube-apiserver's strict decoder does, or become
 * warnings. For built-in types the field lists come from @kubernetes/client-node's generated
 * models, loaded on the first write that asks for validation (client-node takes seconds to load
 * under tap's hooks, and most tests of the double never ask), and no directive means Ignore; a
 * custom resource's unknown fields are what its schema would prune, and no directive means Warn,
 * kube-apiserver's default.
 */
import type { KubeObject as RenderedObject } from '../util/kube-object.js';
import { unknownFieldsOf } from './crd-schema.js';
import type { KubeObject } from './objects.js';
import type { ResourceType } from './resources.js';

export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';

const DIRECTIVES: readonly FieldValidation[] = ['Strict', 'Warn', 'Ignore'];

/** The directive (undefined when the request names none), or the 400 text for a value kube-apiserver does not know. */
export function fieldValidationOf(query: URLSearchParams): FieldValidation | undefined | { error: string } {
  const value = query.get('fieldValidation');
  if (value === null || value === '') return undefined;
  if ((DIRECTIVES as readonly string[]).includes(value)) return value as FieldValidation;
  return { error: `fieldValidation must be one of "Ignore", "Warn", or "Strict", got: ${JSON.stringify(value)}` };
}

export interface FieldFindings {
  /** The 400 message under Strict. */
  error?: string;
  warnings: string[];
}

type FieldLists = typeof import('../util/strict-fields.js');
let fieldLists: Promise<FieldLists> | undefined;

export type FieldChecker = (type: ResourceType, object: KubeObject) => FieldFindings;

const NOTHING_TO_CHECK: FieldChecker = () => ({ warnings: [] });

/** The check for `directive` (a request without one: see above), once what it needs is loaded; synchronous from then on. */
export async function fieldChecker(directive: FieldValidation | undefined): Promise<FieldChecker> {
  if (directive === 'Ignore') return NOTHING_TO_CHECK;
  if (directive === undefined) return (type, object) => (type.custom ? checkCustomFields(type, object, 'Warn') : { warnings: [] });
  fieldLists ??= import('../util/strict-fields.js');
  const lists = await fieldLists;
  return (type, object) => (type.custom ? checkCustomFields(type, object, directive) : checkFields(lists, type, object, directive));
}

function findings(type: ResourceType, paths: readonly string[], directive: 'Strict' | 'Warn'): FieldFindings {
  const unknown = paths.map((path) => `unknown field ${JSON.stringify(path)}`);
  if (unknown.length === 0) return { warnings: [] };
  if (directive === 'Warn') return { warnings: unknown };
  return { error: `${type.kind} in version "${type.version}" cannot be handled as a ${type.kind}: strict decoding error: ${unknown.join(', ')}`, warnings: [] };
}

function checkFields({ hasFieldList, unknownFields }: FieldLists, type: ResourceType, object: KubeObject, directive: 'Strict' | 'Warn'): FieldFindings {
  const typed = { ...object, apiVersion: type.group === '' ? type.version : `${type.group}/${type.version}`, kind: type.kind } as RenderedObject;
  if (!hasFieldList(typed)) return { warnings: [] };
  return findings(type, unknownFields(typed), directive);
}

/** What the version's schema prunes (and ObjectMeta drops): the decoder's unknown field paths. */
function checkCustomFields(type: ResourceType, object: KubeObject, directive: 'Strict' | 'Warn'): FieldFindings {
  return findings(type, unknownFieldsOf(object, type.custom?.schema), directive);
}
