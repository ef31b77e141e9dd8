/**
 * The signal handling of a process that runs a worker: the first SIGINT/SIGTERM asks for one graceful
 * shutdown, the second exits at once with the shell's code for the signal. (A worker stopped by SIGTERM as a
 * real process: test/temporal/cli-output.test.ts.)
 */
import { onShutdownSignal, signalExitCode } from '../../../worker/shutdown';

afterEach(() => jest.restoreAllMocks());

it('exit codes are the ones a shell reports for a process ended by the signal', () => {
  expect(signalExitCode('SIGINT')).toBe(130);
  expect(signalExitCode('SIGTERM')).toBe(143);
});

it('the first signal asks for the shutdown once; the second says so and exits at once', () => {
  const exit = jest.spyOn(process, 'exit').mockImplementation(() => undefined as never);
  const listeners = [process.listenerCount('SIGINT'), process.listenerCount('SIGTERM')];
  const firsts: NodeJS.Signals[] = [];
  const lines: string[] = [];
  const release = onShutdownSignal(
    (signal) => firsts.push(signal),
    (line) => lines.push(line),
  );
  try {
    process.emit('SIGTERM', 'SIGTERM');
    expect(firsts).toEqual(['SIGTERM']);
    expect(exit).not.toHaveBeenCalled();

    process.emit('SIGINT', 'SIGINT');
    expect(firsts).toEqual(['SIGTERM']);
    expect(lines).toEqual(['SIGINT again: exiting without waiting for the shutdown']);
    expect(exit).toHaveBeenCalledWith(130);
  } finally {
    release();
  }
  expect([process.listenerCount('SIGINT'), process.listenerCount('SIGTERM')]).toEqual(listeners);
});
