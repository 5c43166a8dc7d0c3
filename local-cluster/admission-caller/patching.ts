/** Applying a mutating webhook's JSON Patch (contract 2.4). */
import jsonPatch from 'fast-json-patch';
import type { KubeObject } from '../fake-apiserver/index.js';
import { clone } from '../fake-apiserver/objects.js';
import { internalError } from '../fake-apiserver/status.js';
import { CallError, FinalStatus } from './outcomes.js';
import { decodeTyped, hasTypedSchema, TypedDecodeError } from '../util/typed-decode.js';


/**
 * The patched object, decoded into the kind's typed schema as kube-apiserver decodes it (unknown
 * fields dropped; a value of the wrong type a 500 that failurePolicy does not cover). Undecodable
 * patch bytes are a call error; a patch on DELETE and a patch that does not apply are 500s that
 * ignore failurePolicy.
 */
export async function applyWebhookPatch(
  hookName: string,
  object: KubeObject | undefined,
  patch: string | undefined,
  kind: { version: string; kind: string },
): Promise<KubeObject | undefined> {
  const patched = applyPatchOperations(hookName, object, patch);
  if (patched === object || patched === undefined) return patched;
  if (!(await hasTypedSchema(kind.version, kind.kind))) return patched; // a custom resource: unstructured, kept whole
  try {
    return await decodeTyped(patched, kind.version, kind.kind);
  } catch (error) {
    if (error instanceof TypedDecodeError) throw new FinalStatus(internalError(error.message));
    throw error;
  }
}

function applyPatchOperations(hookName: string, object: KubeObject | undefined, patch: string | undefined): KubeObject | undefined {
  if (patch === undefined) return object;
  let operations: unknown;
  try {
    operations = JSON.parse(patch);
  } catch {
    throw new CallError('received undecodable patch in webhook response');
  }
  if (!Array.isArray(operations)) throw new CallError('received undecodable patch in webhook response');
  if (operations.length === 0) return object;
  if (object === undefined) {
    throw new FinalStatus(internalError(`admission webhook "${hookName}" attempted to modify the object, which is not supported for this operation`));
  }
  try {
    return jsonPatch.applyPatch(clone(object), operations as jsonPatch.Operation[], true, false).newDocument;
  } catch (error) {
    throw new FinalStatus(internalError((error as Error).message.split('\n')[0] ?? 'patch failed'));
  }
}
