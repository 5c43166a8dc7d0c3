import type { BuiltInKindName, KindInfo } from './kind-table.js';
import type { BuiltInKindObjects } from './models.js';

/** What a typed webhook's `kind` names: a built-in kind (`'Pod'`) or a kind of your own (defineKind). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type KindRef = BuiltInKindName | KindInfo<any>;

/**
 * The type of the objects of kind `K` as a review carries them: `ObjectOf<'Pod'>` is V1Pod,
 * `ObjectOf<'Pod' | 'Deployment'>` either, `ObjectOf<typeof widgetKind>` your CRD's type.
 */
export type ObjectOf<K> = K extends BuiltInKindName ? BuiltInKindObjects[K] : K extends KindInfo<infer T> ? T : never;
