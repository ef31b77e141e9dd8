import { isPortClash } from '../../../worker/temporal-server';

describe('isPortClash', () => {
  it('is true for a dev server that exited because a port it picked was taken', () => {
    const err = new Error(
      'temporal server start-dev exited with code 2:\n' +
        'level=ERROR msg="Failed to start gRPC listener" error="listen tcp 127.0.0.1:45855: bind: address already in use"',
    );
    expect(isPortClash(err)).toBe(true);
  });

  it('is false for other start failures', () => {
    expect(isPortClash(new Error('temporal server start-dev exited with code 1:\nunknown flag --nope'))).toBe(
      false,
    );
    expect(isPortClash(new Error('Temporal dev server on 127.0.0.1:1 did not answer within 60000 ms'))).toBe(
      false,
    );
    expect(isPortClash('address already in use')).toBe(false);
  });
});
