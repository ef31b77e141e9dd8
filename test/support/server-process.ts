/**
 * What the test servers that run as processes of their own share (the fake model providers, the A2A agent):
 * reading their flags, and serving until SIGTERM/SIGINT after one JSON line says where they listen.
 */

/** Calls `handle` for each flag of `argv`; `value()` takes the flag's value (the next argument). */
export function eachFlag(argv: readonly string[], handle: (flag: string, value: () => string) => void): void {
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    handle(flag, () => {
      const next = argv[++i];
      if (next === undefined) throw new Error(`${flag} needs a value`);
      return next;
    });
  }
}

/** `text` as a TCP port (0 asks for any free one). */
export function portValue(flag: string, text: string): number {
  const port = Number(text);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`${flag}: ${text} is not a port (0–65535)`);
  return port;
}

export interface ServingProcess {
  /** Printed as one JSON line once the server listens. */
  line: Record<string, unknown>;
  close(): Promise<void>;
}

/** Starts the server, prints its line, and serves until SIGTERM/SIGINT; a failure to start exits 2. */
export function serveUntilSignalled(name: string, start: () => Promise<ServingProcess>): void {
  start().then(
    (serving) => {
      process.stdout.write(`${JSON.stringify(serving.line)}\n`);
      const stop = (): void => {
        serving.close().then(
          () => process.exit(0),
          () => process.exit(1),
        );
      };
      process.once('SIGTERM', stop);
      process.once('SIGINT', stop);
    },
    (err: unknown) => {
      process.stderr.write(`${name}: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(2);
    },
  );
}
