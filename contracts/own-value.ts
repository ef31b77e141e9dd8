/**
 * A record's own value for a key that came from outside (model text, config keys): `constructor` or
 * `__proto__` must not find Object's prototype.
 */
export function ownValue<T>(record: Readonly<Record<string, T>> | undefined, key: string): T | undefined {
  return record !== undefined && Object.hasOwn(record, key) ? record[key] : undefined;
}
