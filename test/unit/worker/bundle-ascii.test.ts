/**
 * The workflow bundle a worker loads is printed in ASCII (V8 holds a source with one other character two bytes a
 * character, in every copy), its source map still pointing at the sources; a worker that serves one run gets it
 * with a map that maps nothing.
 */
import { readFileSync } from 'node:fs';
import { runInNewContext } from 'node:vm';
import {
  asciiBundle,
  BUILT_BUNDLE_PATH,
  splitSourceMap,
  withoutSourceMappings,
} from '../../../worker/workflow-bundle';

/** The first character past ASCII in `text`, if any. */
const notAscii = (text: string) => [...text].find((char) => char.charCodeAt(0) > 0x7f);

/** A one-line bundle the way webpack inlines its map: `code` as given, its map from a single source. */
function inlineBundle(code: string, map: object): string {
  return `${code}\n//# sourceMappingURL=data:application/json;base64,${Buffer.from(JSON.stringify(map)).toString('base64')}`;
}

describe('the workflow bundle in ASCII', () => {
  it('keeps what every string, template and regular expression holds', async () => {
    const code = [
      '// a comment — dropped',
      'var dash = "a — b";',
      'var tpl = `${dash} … ${1 + 1}`;',
      'var re = /→+/;',
      'var out = [dash, tpl, re.test("x→→y"), "≤".charCodeAt(0)];',
    ].join('\n');
    const map = {
      version: 3,
      file: 'bundle.cjs',
      sources: ['webpack://x/src.ts'],
      names: [],
      // Each line's first column maps to the same line of src.ts.
      mappings: 'AAAA;AACA;AACA;AACA;AACA',
    };
    const printed = await asciiBundle({ code: inlineBundle(code, map), sources: ['src.ts'] });

    expect(printed.sources).toEqual(['src.ts']);
    const split = splitSourceMap(printed.code);
    expect(notAscii(printed.code)).toBeUndefined();
    expect(split.code).not.toContain('dropped');
    const sandbox: { out?: unknown } = {};
    runInNewContext(split.code, sandbox);
    expect(sandbox.out).toEqual(['a — b', 'a — b … 2', true, '≤'.charCodeAt(0)]);
    expect(split.map.file).toBe('bundle.cjs');
    expect(split.map.sources).toEqual(['webpack://x/src.ts']);
    expect(split.map.mappings).not.toBe('');
  });

  it('is what `npm run build` leaves for every worker, its map still naming the workflow sources', () => {
    const built = readFileSync(BUILT_BUNDLE_PATH, 'utf8');
    expect(notAscii(built)).toBeUndefined();
    const { map } = splitSourceMap(built);
    expect(map.sources.some((source) => /workflows\/agent-loop\.ts$/.test(source))).toBe(true);
    expect(map.mappings.length).toBeGreaterThan(100_000);
  });

  it("gives a one-run worker the same code with a map that maps nothing (the SDK needs the map's file)", () => {
    const built = readFileSync(BUILT_BUNDLE_PATH, 'utf8');
    const stripped = withoutSourceMappings(built);
    const before = splitSourceMap(built);
    const after = splitSourceMap(stripped);
    expect(after.code.trimEnd()).toBe(before.code.trimEnd());
    expect(after.map).toEqual({ version: 3, file: before.map.file, sources: [], names: [], mappings: '' });
    expect(stripped.length).toBeLessThan(built.length / 1.5);
  });

  it('refuses a bundle without an inline map, as the SDK would', () => {
    expect(() => splitSourceMap('var x = 1;')).toThrow('the workflow bundle has no inline source map');
  });
});
