/**
 * A SKILL.md's front matter: the YAML mapping between the `---` lines at its top, as DeerFlow reads it (`name`
 * and `description` required; `license` and `allowed-tools` optional) plus this project's `required-secrets`.
 * A file that does not hold one is not a skill: the reason says why, in words a skill author can act on.
 * Pure (the `yaml` package, no Node APIs); apart from contracts/skills.ts so workflow code never loads YAML.
 */
import { parseDocument } from 'yaml';
import { skillNameProblem } from './skills';

export interface SkillFrontMatter {
  name: string;
  description: string;
  license?: string;
  allowed_tools?: string[];
  required_secrets: string[];
}

export type FrontMatterResult =
  { ok: true; front_matter: SkillFrontMatter; warnings: string[] } | { ok: false; reason: string };

/** DeerFlow's limit; the description is what a model reads to decide whether to use the skill. */
export const SKILL_DESCRIPTION_MAX_LENGTH = 1024;

/** Keys a SKILL.md may carry: DeerFlow's, and ours (`required-secrets`). Others are reported, not fatal. */
const KNOWN_KEYS = [
  'name',
  'description',
  'license',
  'allowed-tools',
  'required-secrets',
  'metadata',
  'compatibility',
  'version',
  'author',
];

const FRONT_MATTER = /^---[ \t]*\r?\n(?:([\s\S]*?)\r?\n)?---[ \t]*(?:\r?\n|$)/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Far above a real front matter; more aliases than this is a YAML bomb, not a skill. */
const MAX_ALIAS_COUNT = 50;

function fail(reason: string): FrontMatterResult {
  return { ok: false, reason };
}

/** A list of non-empty trimmed strings, or the reason it is not one. */
function textList(value: unknown, key: string, check?: (item: string) => string | undefined) {
  if (!Array.isArray(value)) return { reason: `${key} is not a list (e.g. ${key}: [a, b])` };
  const items: string[] = [];
  for (const item of value) {
    if (typeof item !== 'string' || item.trim() === '')
      return { reason: `${key} holds ${JSON.stringify(item)}, not a name` };
    const problem = check?.(item.trim());
    if (problem !== undefined) return { reason: `${key} holds ${JSON.stringify(item)}, which ${problem}` };
    items.push(item.trim());
  }
  return { items };
}

/** Reads the front matter of a SKILL.md's text. */
export function parseSkillFrontMatter(text: string): FrontMatterResult {
  const source = text.startsWith('\uFEFF') ? text.slice(1) : text;
  const match = FRONT_MATTER.exec(source);
  if (match === null) {
    return fail(
      /^---[ \t]*\r?\n/.test(source)
        ? 'has no closing --- line after its front matter'
        : 'has no front matter (a --- line, then name: and description:, then a --- line, at the top)',
    );
  }
  const document = parseDocument(match[1] ?? '');
  if (document.errors.length > 0) {
    return fail(`has front matter that is not valid YAML (${document.errors[0].message.split('\n')[0]})`);
  }
  let meta: unknown;
  try {
    meta = document.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (error) {
    return fail(`has front matter that is not valid YAML (${(error as Error).message.split('\n')[0]})`);
  }
  if (meta === null || typeof meta !== 'object' || Array.isArray(meta)) {
    return fail('has front matter that is not a mapping (name: and description: lines)');
  }
  const fields = meta as Record<string, unknown>;

  if (fields.name === undefined || fields.name === null) return fail('has no name in its front matter');
  if (typeof fields.name !== 'string') return fail('has a name that is not text');
  const name = fields.name.trim();
  const nameProblem = skillNameProblem(name);
  if (nameProblem !== undefined) return fail(`has name ${JSON.stringify(name)}, which ${nameProblem}`);

  if (fields.description === undefined || fields.description === null)
    return fail('has no description in its front matter');
  if (typeof fields.description !== 'string') return fail('has a description that is not text');
  const description = fields.description.trim();
  if (description === '') return fail('has an empty description');
  if (description.length > SKILL_DESCRIPTION_MAX_LENGTH)
    return fail(`has a description over ${SKILL_DESCRIPTION_MAX_LENGTH} characters`);
  // It is shown to the model inside a tagged block of the prompt; DeerFlow refuses them for the same reason.
  if (/[<>]/.test(description))
    return fail('has a description with < or > (DeerFlow refuses angle brackets)');

  const front: SkillFrontMatter = { name, description, required_secrets: [] };
  const license = fields.license;
  if (license !== undefined && license !== null) {
    if (typeof license !== 'string' && typeof license !== 'number')
      return fail('has a license that is not text');
    if (String(license).trim() !== '') front.license = String(license).trim();
  }
  if (fields['allowed-tools'] !== undefined && fields['allowed-tools'] !== null) {
    const tools = textList(fields['allowed-tools'], 'allowed-tools');
    if (tools.reason !== undefined) return fail(`has ${tools.reason}`);
    front.allowed_tools = tools.items;
  }
  if (fields['required-secrets'] !== undefined && fields['required-secrets'] !== null) {
    const secrets = textList(fields['required-secrets'], 'required-secrets', (item) =>
      ENV_NAME.test(item) ? undefined : 'is not an environment variable name (e.g. GITHUB_TOKEN)',
    );
    if (secrets.reason !== undefined) return fail(`has ${secrets.reason}`);
    front.required_secrets = secrets.items;
  }
  const unknown = Object.keys(fields).filter((key) => !KNOWN_KEYS.includes(key));
  const warnings =
    unknown.length === 0 ? [] : [`has front matter keys this project does not read: ${unknown.join(', ')}`];
  return { ok: true, front_matter: front, warnings };
}
