import { RESULT_VALUES, type ResultValue, type RuleResult } from './results.js';

/** A kind the audit lists: one object shared by every object of it. */
export interface KeptKind {
  apiVersion: string;
  kind: string;
  /** `<group>/<resource>`: what identifies the listed resource. */
  key: string;
}

/**
 * What the background audit keeps of one object: its identity, resourceVersion and results,
 * never the object. The results are one character each (rule index * 8 + result), which keeps
 * an object with thirty results in about eighty bytes and makes "did they change" one string
 * comparison; the messages of the results that carry one follow in order.
 */
export interface KeptObject {
  readonly kind: KeptKind;
  /** '' for a cluster-scoped object. */
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly resourceVersion: string;
  readonly codes: string;
  readonly messages: readonly string[] | undefined;
  /** When it was last set, in the store's own count: a re-list skips what a watch event set since it began. */
  readonly seen: number;
}

/** The identity of an object as listed or watched. */
export interface ObjectIdentity {
  namespace: string;
  name: string;
  uid: string;
  resourceVersion: string;
}

const RESULT_CODE = new Map<ResultValue, number>(RESULT_VALUES.map((value, index) => [value, index]));
const RULE_LIMIT = 8000;

/** The rule names ever reported, each with a small number that stays its own for the process. */
export class RuleTable {
  readonly #names: string[] = [];
  readonly #indices = new Map<string, number>();

  indexOf(name: string): number {
    let index = this.#indices.get(name);
    if (index === undefined) {
      if (this.#names.length >= RULE_LIMIT) throw new Error(`more than ${RULE_LIMIT} rule names in one process`);
      index = this.#names.length;
      this.#names.push(name);
      this.#indices.set(name, index);
    }
    return index;
  }

  nameOf(index: number): string {
    return this.#names[index] ?? '';
  }
}

/** The results encoded as KeptObject keeps them. */
export function encodeResults(results: readonly RuleResult[], rules: RuleTable): { codes: string; messages: string[] | undefined } {
  let codes = '';
  let messages: string[] | undefined;
  for (const { rule, result, message } of results) {
    codes += String.fromCharCode(rules.indexOf(rule) * 8 + (RESULT_CODE.get(result) ?? 0));
    if (message !== undefined) (messages ??= []).push(message);
  }
  return { codes, messages };
}

/** A kept object's results, decoded. */
export function decodeResults(object: Pick<KeptObject, 'codes' | 'messages'>, rules: RuleTable): RuleResult[] {
  const results: RuleResult[] = [];
  let next = 0;
  for (let i = 0; i < object.codes.length; i++) {
    const code = object.codes.charCodeAt(i);
    const result = RESULT_VALUES[code % 8] ?? 'error';
    const message = result === 'pass' ? undefined : object.messages?.[next++];
    results.push({ rule: rules.nameOf(Math.floor(code / 8)), result, ...(message !== undefined ? { message } : {}) });
  }
  return results;
}

/** The rule index and result of each code of `codes`. */
export function* codePairs(codes: string): Generator<[rule: number, result: ResultValue]> {
  for (let i = 0; i < codes.length; i++) {
    const code = codes.charCodeAt(i);
    yield [Math.floor(code / 8), RESULT_VALUES[code % 8] ?? 'error'];
  }
}

/** Told of every change: what was kept before (if anything) and what is kept now (if anything). */
export type KeptChange = (before: KeptObject | undefined, after: KeptObject | undefined) => void;

/**
 * The audit's memory: per namespace, the kept objects by uid. Setting results that did not
 * change is no change (the caller marks nothing dirty, so nothing is written).
 */
export class KeptObjects {
  readonly #byNamespace = new Map<string, Map<string, KeptObject>>();
  readonly #onChange: KeptChange;
  #count = 0;
  #clock = 0;

  constructor(onChange: KeptChange = () => undefined) {
    this.#onChange = onChange;
  }

  get size(): number {
    return this.#count;
  }

  /** The store's count now; every set() moves it on. */
  get clock(): number {
    return this.#clock;
  }

  get(namespace: string, uid: string): KeptObject | undefined {
    return this.#byNamespace.get(namespace)?.get(uid);
  }

  /** Keeps `identity` with its results; true when the results differ from those kept (or it is new). */
  set(kind: KeptKind, identity: ObjectIdentity, encoded: { codes: string; messages: string[] | undefined }): boolean {
    let objects = this.#byNamespace.get(identity.namespace);
    if (!objects) this.#byNamespace.set(identity.namespace, (objects = new Map()));
    const before = objects.get(identity.uid);
    const after: KeptObject = {
      kind,
      namespace: before?.namespace ?? identity.namespace,
      name: identity.name,
      uid: identity.uid,
      resourceVersion: identity.resourceVersion,
      codes: encoded.codes,
      messages: encoded.messages,
      seen: ++this.#clock,
    };
    objects.set(identity.uid, after);
    if (!before) this.#count++;
    const changed = !before || before.codes !== after.codes || before.name !== after.name || before.kind !== after.kind || !sameMessages(before.messages, after.messages);
    if (changed) this.#onChange(before, after);
    return changed;
  }

  /** Notes that the object was seen as kept (listed again with the same resourceVersion), without a change. */
  touch(namespace: string, uid: string): void {
    const objects = this.#byNamespace.get(namespace);
    const kept = objects?.get(uid);
    if (objects && kept) objects.set(uid, { ...kept, seen: ++this.#clock });
  }

  /** Forgets the resourceVersions kept of `kindKey`'s objects: the next list judges every one of them again. */
  staleKind(kindKey: string): void {
    for (const objects of this.#byNamespace.values()) {
      for (const [uid, object] of objects) if (object.kind.key === kindKey) objects.set(uid, { ...object, resourceVersion: '' });
    }
  }

  /** Forgets an object; true when it was kept. */
  delete(namespace: string, uid: string): boolean {
    const objects = this.#byNamespace.get(namespace);
    const before = objects?.get(uid);
    if (!objects || !before) return false;
    objects.delete(uid);
    if (objects.size === 0) this.#byNamespace.delete(namespace);
    this.#count--;
    this.#onChange(before, undefined);
    return true;
  }

  namespaces(): IterableIterator<string> {
    return this.#byNamespace.keys();
  }

  objectsIn(namespace: string): Iterable<KeptObject> {
    return this.#byNamespace.get(namespace)?.values() ?? [];
  }

  /** Forgets every object for which `drop` is true; the namespaces that changed. */
  deleteWhere(drop: (object: KeptObject) => boolean): Set<string> {
    const changed = new Set<string>();
    for (const [namespace, objects] of [...this.#byNamespace]) {
      for (const object of [...objects.values()]) if (drop(object) && this.delete(namespace, object.uid)) changed.add(namespace);
    }
    return changed;
  }

  /** Removes the results of the rules `gone` names from every object; the namespaces that changed. */
  dropRules(gone: ReadonlySet<number>): Set<string> {
    const changed = new Set<string>();
    if (gone.size === 0) return changed;
    for (const objects of this.#byNamespace.values()) {
      for (const object of [...objects.values()]) {
        let codes = '';
        const messages: string[] = [];
        let next = 0;
        for (let i = 0; i < object.codes.length; i++) {
          const code = object.codes.charCodeAt(i);
          const message = code % 8 === 0 ? undefined : object.messages?.[next++];
          if (gone.has(Math.floor(code / 8))) continue;
          codes += object.codes[i];
          if (message !== undefined) messages.push(message);
        }
        if (codes === object.codes) continue;
        const identity = { namespace: object.namespace, name: object.name, uid: object.uid, resourceVersion: object.resourceVersion };
        if (this.set(object.kind, identity, { codes, messages: messages.length > 0 ? messages : undefined })) changed.add(object.namespace);
      }
    }
    return changed;
  }
}

function sameMessages(a: readonly string[] | undefined, b: readonly string[] | undefined): boolean {
  if (a === b) return true;
  if (!a || !b || a.length !== b.length) return false;
  return a.every((message, i) => message === b[i]);
}
