/**
 * The Temporal CLI built from source with Go (DESIGN §7): the fallback where there is no Python. Minutes on
 * a cold machine, so it reports what it is doing (modules downloaded, packages compiled).
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { WaitHandle } from '../worker/wait-progress';
import {
  CliRouteError,
  GO_BUILD,
  installChecked,
  lastLine,
  partialName,
  removeStalePartials,
  runTool,
} from './temporal-cli-builds';

export const TEMPORAL_CLI_MODULE = 'github.com/temporalio/cli/cmd/temporal';
export const GO_INSTALL_TARGET = `${TEMPORAL_CLI_MODULE}@${GO_BUILD.version}`;

/** Packages `go install -v` names in a build with an empty Go build cache (measured: 1,297; fewer when warm). */
const COLD_BUILD_PACKAGES = 1300;

/**
 * A `go build -v` (or `go install -v`)'s stderr as progress: `-v` names each package as it is compiled, the
 * one sign of progress a Go build gives, and the modules it downloads first.
 */
export function goBuildProgress(wait: WaitHandle, coldBuildPackages: number): (line: string) => void {
  let downloaded = 0;
  let compiled = 0;
  return (line) => {
    if (line.startsWith('go: downloading ')) {
      downloaded += 1;
      wait.update(`${downloaded} modules downloaded: ${line.slice('go: downloading '.length)}`);
    } else if (!line.startsWith('go: ')) {
      compiled += 1;
      wait.update(`${compiled}/~${coldBuildPackages} packages compiled: ${line}`);
    }
  };
}

export interface GoBuild {
  go: string;
  /** The cache folder of the Go build; the binary lands in it as `temporal`. */
  dir: string;
  env: NodeJS.ProcessEnv;
  wait: WaitHandle;
}

/** Builds, checks and caches the binary; returns its path and what `--version` says. */
export async function buildWithGo(options: GoBuild): Promise<{ path: string; version: string }> {
  const { go, dir, env, wait } = options;
  mkdirSync(dir, { recursive: true });
  removeStalePartials(dir);
  // Built beside the cache entry, moved into place once checked: a killed build leaves no half binary there.
  const gobin = mkdtempSync(join(dir, partialName('go-build')));
  try {
    wait.update(`go install ${GO_INSTALL_TARGET}`);
    const build = await runTool(go, ['install', '-v', GO_INSTALL_TARGET], {
      env: { ...env, GOBIN: gobin },
      timeoutMs: 30 * 60_000,
      onStderrLine: goBuildProgress(wait, COLD_BUILD_PACKAGES),
    });
    if (build.code !== 0) {
      throw new CliRouteError(
        `go install ${GO_INSTALL_TARGET} ${build.timedOut ? 'did not finish within 30 minutes' : `failed (exit ${build.code}): ${lastLine(build.stderr)}`}` +
          ' (is the Go module proxy reachable? see GOPROXY)',
      );
    }
    const path = join(dir, 'temporal');
    const version = await installChecked(join(gobin, 'temporal'), path, GO_BUILD, env);
    return { path, version };
  } finally {
    rmSync(gobin, { recursive: true, force: true });
  }
}
