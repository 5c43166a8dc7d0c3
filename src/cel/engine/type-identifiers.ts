/**
 * Type identifiers: cel-go makes the name of a type an environment declares with cel.Types an
 * identifier whose value is the type, so `type(ip('1.2.3.4')) == net.IP` holds (Kubernetes' IP
 * and CIDR libraries declare `net.IP` and `net.CIDR`). The dotted name resolves as a qualified
 * identifier (checker-extensions.ts).
 */
import type { Environment } from '@marcbachmann/cel-js';

/**
 * Declares `name` the identifier of the type of `sample`'s value. Its value must be the type
 * value type() returns, as `==` compares types by identity; cel-js does not export it, so it is
 * read once from type(sample).
 */
export function declareTypeIdentifier(env: Environment, name: string, sample: string): void {
  env.registerConstant(name, 'type', env.evaluate(`type(${sample})`));
}
