/**
 * The ACP SDK (`@agentclientprotocol/sdk`, stable ACP v1), loaded when a worker first talks to an ACP agent: a
 * worker whose config names none never loads it. The package is an ES module only; this project is CommonJS.
 * Node loads an ES module through `require` from 20.19 on, but a test's `require` is jest's, which cannot on
 * Node 20, so the package is required through a module of Node's own; in a worker the two are the same.
 */
import Module from 'node:module';
import type * as AcpModule from '@agentclientprotocol/sdk' with { 'resolution-mode': 'import' };
import { loadOptional } from '../../../payloads/optional-packages';

export type AcpSdk = typeof AcpModule;
export type * as Acp from '@agentclientprotocol/sdk' with { 'resolution-mode': 'import' };

export const ACP_PACKAGE = '@agentclientprotocol/sdk';

/** The ACP SDK (loaded once: Node's module cache keeps it); a MissingPackageError when this install left it out. */
export function acpSdk(): AcpSdk {
  return loadOptional('an ACP subagent provider (subagent_providers: type acp)', loadEsm, [ACP_PACKAGE]);
}

function loadEsm(): AcpSdk {
  const entry = require.resolve(ACP_PACKAGE);
  // A Module's own `require` is Node's, whoever required this file.
  const holder = new Module(__filename);
  holder.filename = __filename;
  try {
    return holder.require(entry) as AcpSdk;
  } catch (err) {
    if ((err as { code?: unknown }).code === 'ERR_REQUIRE_ESM') {
      throw new Error(
        `${ACP_PACKAGE} is an ES module, which this Node.js (${process.version}) cannot load from CommonJS: ` +
          'ACP subagent providers need Node.js 20.19 or newer',
      );
    }
    throw err;
  }
}
