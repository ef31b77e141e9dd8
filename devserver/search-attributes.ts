/**
 * The project's search attributes on a server that serves already: those missing are added through the
 * server's own gRPC API. A dev server registers them at its start (`--search-attribute`), but only when it
 * makes its database: one kept in a file from before an attribute existed (`subagents dev-server`'s) lacks
 * it, and the server refuses every start that names it. A PostgreSQL-backed server registers none itself.
 */
import type { Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { SEARCH_ATTRIBUTES } from '../contracts/search-attributes';

const IndexedValueType = temporal.api.enums.v1.IndexedValueType;

/** The project's search attribute types as the server's API names them. */
const INDEXED_TYPES: Record<
  (typeof SEARCH_ATTRIBUTES)[keyof typeof SEARCH_ATTRIBUTES],
  temporal.api.enums.v1.IndexedValueType
> = {
  Keyword: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
  Int: IndexedValueType.INDEXED_VALUE_TYPE_INT,
  Double: IndexedValueType.INDEXED_VALUE_TYPE_DOUBLE,
};

/** Adds the project's search attributes `namespace` lacks; returns their names (none: all were there). */
export async function addMissingSearchAttributes(
  connection: Connection,
  namespace: string,
): Promise<string[]> {
  const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
  const missing = Object.entries(SEARCH_ATTRIBUTES).filter(([name]) => !(name in (customAttributes ?? {})));
  if (missing.length > 0) {
    await connection.operatorService.addSearchAttributes({
      namespace,
      searchAttributes: Object.fromEntries(missing.map(([name, type]) => [name, INDEXED_TYPES[type]])),
    });
  }
  return missing.map(([name]) => name);
}
