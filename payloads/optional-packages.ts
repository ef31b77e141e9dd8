/**
 * The packages only some configs use: package.json's optionalDependencies, which a light install
 * (`npm install --omit=optional`) leaves out. Each is loaded where a config first needs it; when it is not
 * installed, the error names the package, what needed it and the command that adds it, instead of a bare
 * "Cannot find module". Here, in the lowest floor with Node APIs, because every floor above loads one (the S3
 * payload store is in this one).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/** package.json's optionalDependencies (a unit test holds the two together). */
export const OPTIONAL_PACKAGES = [
  '@aws-sdk/client-s3',
  '@langchain/anthropic',
  '@langchain/aws',
  '@langchain/core',
  '@langchain/google-genai',
  '@langchain/langgraph',
  '@langchain/ollama',
  '@langchain/openai',
  '@modelcontextprotocol/sdk',
  '@opentelemetry/core',
  '@opentelemetry/resources',
  '@opentelemetry/sdk-trace-base',
  '@temporalio/interceptors-opentelemetry',
  'just-bash',
] as const;

/** The command that adds every optional package (the lockfile's versions). */
export const INSTALL_OPTIONAL = 'npm install --include=optional';

export function missingPackageMessage(packageName: string, neededBy: string): string {
  return (
    `${neededBy} needs the package ${packageName}, which this install left out (it is optional; ` +
    `\`npm install --omit=optional\` skips it): run \`${INSTALL_OPTIONAL}\` in the project to add it`
  );
}

/** A config asked for something whose optional package is not installed. */
export class MissingPackageError extends Error {
  override name = 'MissingPackageError';

  constructor(
    readonly packageName: string,
    readonly neededBy: string,
  ) {
    super(missingPackageMessage(packageName, neededBy));
  }
}

/**
 * Whether `packageName` is installed where this project's `require` looks: its folder with a package.json
 * (its `exports` may hide both that file and a CommonJS entry, so no `require.resolve`).
 */
export function isInstalled(packageName: string): boolean {
  return (require.resolve.paths(packageName) ?? []).some((dir) =>
    existsSync(join(dir, ...packageName.split('/'), 'package.json')),
  );
}

/**
 * The package of `packages` that `err` (thrown by a `require`) says is missing: a "Cannot find module" for it
 * or one of its files, while it does not resolve. A missing file of an installed package is not one.
 */
export function missingOptionalPackage(
  err: unknown,
  packages: readonly string[] = OPTIONAL_PACKAGES,
): string | undefined {
  // Not `instanceof Error`: jest's module registry throws its own, from another realm.
  const { code, message } = (typeof err === 'object' && err !== null ? err : {}) as {
    code?: unknown;
    message?: unknown;
  };
  if (code !== 'MODULE_NOT_FOUND' || typeof message !== 'string') return undefined;
  const specifier = /Cannot find module '([^']+)'/.exec(message)?.[1];
  if (specifier === undefined) return undefined;
  const name = packages.find((candidate) => specifier === candidate || specifier.startsWith(`${candidate}/`));
  return name !== undefined && !isInstalled(name) ? name : undefined;
}

/**
 * `load()`, a `require` of an optional package (or of a module that requires one): its value, or a
 * MissingPackageError saying what `neededBy` needs when that package is not installed.
 */
export function loadOptional<T>(
  neededBy: string,
  load: () => T,
  packages: readonly string[] = OPTIONAL_PACKAGES,
): T {
  try {
    return load();
  } catch (err) {
    const packageName = missingOptionalPackage(err, packages);
    if (packageName !== undefined) throw new MissingPackageError(packageName, neededBy);
    throw err;
  }
}
