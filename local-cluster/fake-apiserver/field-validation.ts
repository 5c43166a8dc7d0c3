/**
 * Server-side field validation (`?fieldValidation=Strict|Warn|Ignore`, what `kubectl apply`
 * sends): unknown fields of built-in types fail the request as kube-apiserver's strict decoder
 * does, or become warnings. Field lists from @kubernetes/client-node's generated models, loaded
 * on the first write that asks for validation: client-node takes seconds to load under tap's
 * hooks, and most tests of the double never ask.
 */
import type { KubeObject as RenderedObject } from '../util/kube-object.js';
import type { KubeObject } from './objects.js';
import type { ResourceType } from './resources.js';

export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';

const DIRECTIVES: readonly FieldValidation[] = ['Strict', 'Warn', 'Ignore'];

/** The directive, or the 400 text for a value kube-apiserver does not know. */
export function fieldValidationOf(query: URLSearchParams): FieldValidation | { error: string } {
  const value = query.get('fieldValidation');
  if (value === null || value === '') return 'Ignore';
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

/** The check for `directive`, once what it needs is loaded; synchronous from then on. */
export async function fieldChecker(directive: FieldValidation): Promise<FieldChecker> {
  if (directive === 'Ignore') return NOTHING_TO_CHECK;
  fieldLists ??= import('../util/strict-fields.js');
  const lists = await fieldLists;
  return (type, object) => checkFields(lists, type, object, directive);
}

function checkFields({ hasFieldList, unknownFields }: FieldLists, type: ResourceType, object: KubeObject, directive: 'Strict' | 'Warn'): FieldFindings {
  if (type.custom) return { warnings: [] };
  const typed = { ...object, apiVersion: type.group === '' ? type.version : `${type.group}/${type.version}`, kind: type.kind } as RenderedObject;
  if (!hasFieldList(typed)) return { warnings: [] };
  const unknown = unknownFields(typed).map((path) => `unknown field ${JSON.stringify(path)}`);
  if (unknown.length === 0) return { warnings: [] };
  if (directive === 'Warn') return { warnings: unknown };
  return { error: `${type.kind} in version "${type.version}" cannot be handled as a ${type.kind}: strict decoding error: ${unknown.join(', ')}`, warnings: [] };
}
