/** Plain records as config and workflow state hold them: read by own key, written without empty keys. */

/** Own keys only: a name such as `constructor` must not find Object's prototype. */
export function ownEntry<T>(record: Readonly<Record<string, T>> | undefined, key: string): T | undefined {
  return record !== undefined && Object.hasOwn(record, key) ? record[key] : undefined;
}

/** The same record without its `undefined` values, so an unset optional key is absent, not present-and-empty. */
export function withoutUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, item]) => item !== undefined)) as T;
}
