/**
 * The manual's examples hold: every YAML config example in README.md, docs/*.md and config.example.yaml
 * parses with the project's own config schema, every relative link in README.md and docs/*.md reaches a file
 * (and a heading, when it names one), and docs/configuration.md names every key the schema accepts.
 *
 * A fenced ```yaml block is a config example unless its first line is the comment `# not a config file`
 * (written so for YAML of another kind, such as the Temporal server's dynamic config).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { parse } from 'yaml';
import { CONFIG_KEYS, parseConfig } from '../../contracts/config';

/** The first line of a ```yaml block that is not a config example. */
const NOT_A_CONFIG_MARKER = '# not a config file';

/** The repository root, found from wherever the compiled test runs. */
function repoRoot(): string {
  for (let dir = __dirname; dir !== dirname(dir); dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'README.md'))) return dir;
  }
  throw new Error(`the repository root (README.md, package.json) is not above ${__dirname}`);
}

const root = repoRoot();
const docsDir = join(root, 'docs');
const manualFiles = [
  join(root, 'README.md'),
  ...readdirSync(docsDir)
    .filter((name) => name.endsWith('.md'))
    .map((name) => join(docsDir, name)),
];

interface Block {
  file: string;
  line: number;
  text: string;
}

/** The fenced ```yaml blocks of a markdown file, with the line each starts on. */
function yamlBlocks(file: string): Block[] {
  const lines = readFileSync(file, 'utf8').split('\n');
  const blocks: Block[] = [];
  let open: { line: number; indent: string; lines: string[] } | undefined;
  lines.forEach((line, index) => {
    if (open === undefined) {
      const fence = /^(\s*)```ya?ml\s*$/.exec(line);
      if (fence) open = { line: index + 1, indent: fence[1], lines: [] };
    } else if (/^\s*```\s*$/.test(line)) {
      blocks.push({ file, line: open.line, text: open.lines.join('\n') });
      open = undefined;
    } else {
      open.lines.push(line.startsWith(open.indent) ? line.slice(open.indent.length) : line);
    }
  });
  return blocks;
}

function isConfigExample(block: Block): boolean {
  return block.text.trimStart().split('\n')[0].trim() !== NOT_A_CONFIG_MARKER;
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

function anchorsOf(file: string): Set<string> {
  const text = readFileSync(file, 'utf8').replace(/```[\s\S]*?```/g, '');
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((match) => anchorOf(match[1])));
}

/** Relative link targets of a markdown file (code spans and fenced blocks left out). */
function relativeLinks(file: string): string[] {
  const text = readFileSync(file, 'utf8')
    .replace(/```[\s\S]*?```/g, '')
    .replace(/`[^`\n]*`/g, '');
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((match) => match[1])
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

describe('the manual (README.md, docs/)', () => {
  const blocks = manualFiles.flatMap(yamlBlocks);

  it('has config examples to check', () => {
    expect(blocks.filter(isConfigExample).length).toBeGreaterThan(5);
  });

  it.each(
    blocks.filter(isConfigExample).map((block) => [`${relative(root, block.file)}:${block.line}`, block]),
  )('config example at %s parses with the config schema', (_where, block) => {
    const { warnings } = parseConfig(parse((block as Block).text));
    expect(warnings).toEqual([]);
  });

  it('parses config.example.yaml with the config schema', () => {
    const { warnings } = parseConfig(parse(readFileSync(join(root, 'config.example.yaml'), 'utf8')));
    expect(warnings).toEqual([]);
  });

  it('links only to files and headings that exist', () => {
    const broken = manualFiles.flatMap((file) =>
      relativeLinks(file).flatMap((target) => {
        const [path, anchor] = target.split('#');
        const destination = path === '' ? file : resolve(dirname(file), decodeURI(path));
        const where = `${relative(root, file)} → ${target}`;
        if (!existsSync(destination)) return [`${where}: no such file`];
        if (anchor === undefined || !destination.endsWith('.md') || !statSync(destination).isFile())
          return [];
        return anchorsOf(destination).has(anchor) ? [] : [`${where}: no such heading`];
      }),
    );
    expect(broken).toEqual([]);
  });

  it('names every key of the config schema in docs/configuration.md', () => {
    const reference = readFileSync(join(docsDir, 'configuration.md'), 'utf8');
    const missing = Object.entries(CONFIG_KEYS).flatMap(([where, keys]) =>
      keys.map((key) => `${where}.${key}`).filter((path) => !reference.includes(`\`${path}\``)),
    );
    expect(missing).toEqual([]);
  });
});
