import {
  devServerEnv,
  DevServerExitedError,
  isPortClash,
  mayStartOnRetry,
  startFailureText,
} from '../../../devserver/temporal-server';

const goroutines = Array.from(
  { length: 200 },
  (_, i) =>
    `go.uber.org/dig.(*Scope).Invoke(0x311e3b7b38c0)\n\t/home/runner/go/pkg/mod/dig/invoke.go:${i} +0x2d7`,
).join('\n');

describe('isPortClash', () => {
  it('is true for a dev server that exited because a port it picked was taken', () => {
    const err = new Error(
      'temporal server start-dev exited with code 2:\n' +
        'level=ERROR msg="Failed to start gRPC listener" error="listen tcp 127.0.0.1:45855: bind: address already in use"',
    );
    expect(isPortClash(err)).toBe(true);
  });

  it('finds the clash in the whole output even when a long panic dump follows it', () => {
    const output =
      'time=2026-12-01T07:26:00 level=ERROR msg="listen failed" error="listen tcp 127.0.0.1:40001: bind: address already in use"\n' +
      'panic: runtime error: invalid memory address or nil pointer dereference\n' +
      goroutines;
    const err = new DevServerExitedError(2, output);
    expect(isPortClash(err)).toBe(true);
    // The message keeps the cause and the panic line, then the tail, within its bound.
    expect(err.message).toContain('address already in use');
    expect(err.message).toContain('panic: runtime error');
    expect(err.message).toContain('invoke.go:199');
    expect(err.message.length).toBeLessThan(3200);
  });

  it('is false for other start failures', () => {
    expect(isPortClash(new Error('temporal server start-dev exited with code 1:\nunknown flag --nope'))).toBe(
      false,
    );
    expect(isPortClash(new DevServerExitedError(1, `panic: database is locked\n${goroutines}`))).toBe(false);
    expect(isPortClash(new Error('Temporal dev server on 127.0.0.1:1 did not answer within 60000 ms'))).toBe(
      false,
    );
    expect(isPortClash('address already in use')).toBe(false);
  });
});

describe('mayStartOnRetry', () => {
  it('is true for a port clash and for a server that panicked while starting', () => {
    expect(mayStartOnRetry(new DevServerExitedError(2, 'bind: address already in use'))).toBe(true);
    expect(mayStartOnRetry(new DevServerExitedError(2, `panic: runtime error\n${goroutines}`))).toBe(true);
  });

  it('is false for a start refused for what it was asked (a bad flag), or a wait that timed out', () => {
    expect(mayStartOnRetry(new DevServerExitedError(1, 'Error: unknown flag: --nope'))).toBe(false);
    expect(
      mayStartOnRetry(new Error('Temporal dev server on 127.0.0.1:1 did not answer within 60000 ms')),
    ).toBe(false);
  });
});

describe('startFailureText', () => {
  it('is the whole output when it is short', () => {
    expect(startFailureText('  Error: unknown flag --nope\n')).toBe('Error: unknown flag --nope');
  });
});

describe('devServerEnv', () => {
  it("holds a one-shot server's Go heap to a memory limit", () => {
    const env = devServerEnv({ PATH: '/bin' }, true);
    expect(env.PATH).toBe('/bin');
    expect(env.GOMEMLIMIT).toMatch(/^\d+MiB$/);
  });

  it("keeps the Go runtime's defaults for a server kept up for many runs", () => {
    expect(devServerEnv({ PATH: '/bin' }, false)).toEqual({ PATH: '/bin' });
  });

  it('leaves GOGC and GOMEMLIMIT to the user when either is set', () => {
    expect(devServerEnv({ GOGC: '200' }, true)).toEqual({ GOGC: '200' });
    expect(devServerEnv({ GOMEMLIMIT: '1GiB' }, true)).toEqual({ GOMEMLIMIT: '1GiB' });
  });
});
