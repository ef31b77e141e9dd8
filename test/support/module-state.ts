/**
 * State a module keeps at its top level, read off its source with the TypeScript compiler: `let` and `var`
 * bindings, and collections made there (a `new Map`, `Set`, `WeakMap` or `WeakSet` is mutable even when the
 * binding is `const`, or frozen). A collection typed `ReadonlySet` or `ReadonlyMap` is a lookup table no code
 * can change, and is not counted.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as ts from 'typescript';

/** `source: name` for each binding of module-level state in `source` (a path under `root`). */
export function moduleState(root: string, source: string): string[] {
  const file = ts.createSourceFile(source, readFileSync(join(root, source), 'utf8'), ts.ScriptTarget.ES2022);
  const state: string[] = [];
  for (const statement of file.statements) {
    if (!ts.isVariableStatement(statement)) continue;
    const constant = (statement.declarationList.flags & ts.NodeFlags.Const) !== 0;
    for (const declaration of statement.declarationList.declarations) {
      const init = declaration.initializer;
      const collection =
        init !== undefined &&
        ts.isNewExpression(init) &&
        /^(Map|Set|WeakMap|WeakSet)$/.test(init.expression.getText(file));
      const readOnly =
        declaration.type !== undefined && /^Readonly(Set|Map)</.test(declaration.type.getText(file));
      if (!constant || (collection && !readOnly)) state.push(`${source}: ${declaration.name.getText(file)}`);
    }
  }
  return state;
}
