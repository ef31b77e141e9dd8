import { ToolError } from './tool-context';

/** What a file tool was doing when the file system refused, for the message. */
export type FileOperation = 'reading' | 'writing' | 'listing';

/** The path a file tool was asked about, and by which tool. */
export interface FileRequest {
  tool: string;
  /** The path as the model wrote it. */
  requested: string;
  /** Where it was looked for, in messages: a skill mount's container path; absent: the workspace. */
  place?: string;
}

// Duck-typed: errors from Node's fs are not always `instanceof Error` of the caller's realm (jest's vm).
export function errorCode(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string'
    ? err.code
    : undefined;
}

/**
 * The state of the file system or of the path that the model cannot change by retrying the same call, but can
 * react to (write elsewhere, write less, tell the user). They become error results, with the code.
 */
const CONDITIONS: Readonly<Record<string, string>> = {
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  ENOSPC: 'no space left on device',
  EDQUOT: 'disk quota exceeded',
  EROFS: 'the file system is read-only',
  EFBIG: 'the file is larger than the file system allows',
  EMLINK: 'too many entries or links in the folder',
  ETXTBSY: 'the file is a program that is running',
  EBUSY: 'the file is busy',
  EILSEQ: 'the file system does not accept this name',
  EIO: 'input/output error on the disk',
};

/**
 * Turns a file-system error into the error result the model reads. Mistakes in the path keep their plain wording
 * (`"x" does not exist in the workspace`); conditions of the file system name the tool, the condition, its code
 * and the path (`write_file: no space left on device (ENOSPC) writing "notes/a.txt"`). A `ToolError` passes
 * through. Anything else (the worker out of descriptors or memory: EMFILE, ENFILE, ENOMEM; an unknown code) is
 * returned as is, to be thrown: a fault of the worker, which a retry on a healthy worker may cure.
 */
export function fileError(
  err: unknown,
  request: FileRequest,
  operation: FileOperation,
  writeStarted = false,
): unknown {
  const name = `"${request.requested}"`;
  const code = errorCode(err);
  switch (code) {
    case 'ENOENT':
      return new ToolError(`${name} does not exist in ${request.place ?? 'the workspace'}`);
    case 'EISDIR':
      return new ToolError(`${name} is a directory, not a file; list it with ls`);
    case 'ENOTDIR':
    case 'EEXIST':
      return new ToolError(`${name}: a part of this path is a file, not a directory`);
    case 'ELOOP':
      return new ToolError(`path ${name} runs into a loop of symbolic links`);
    case 'ENAMETOOLONG':
      return new ToolError(`${name}: a name in this path is too long`);
    case 'ENXIO':
      return notRegularFile(request);
  }
  if (code === undefined || !(code in CONDITIONS)) return err;
  const partly = writeStarted ? '; the file may now be partly written' : '';
  return new ToolError(`${request.tool}: ${CONDITIONS[code]} (${code}) ${operation} ${name}${partly}`);
}

/** FIFOs, sockets and devices: opening or reading one could block the worker or reach outside the workspace. */
export function notRegularFile(request: FileRequest): ToolError {
  return new ToolError(
    `"${request.requested}" is not a regular file (a FIFO, socket or device); the file tools handle regular files and folders only`,
  );
}
