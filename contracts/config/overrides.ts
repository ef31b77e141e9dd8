/**
 * Settings given outside the file (command-line flags), written into its sections before they are checked,
 * so a flag's value is validated, defaulted and clamped on the one path the file's own values take.
 */
import { formatPath, type ProblemPath } from '../problems';
import { ownEntry } from '../records';
import { isMapping, type Mapping } from './deerflow';
import { DEFAULT_MODEL_ENTRY } from './models';

/** A value and the name the user gave it by (`--max-running`): a problem with it is reported under that name. */
export interface Given<T> {
  value: T;
  source: string;
}

export interface ConfigOverrides {
  /**
   * One model for the lead and every subagent: `openai` (the model id from `model`), `scripted` (the file's
   * scripted model, if any), or another name, which the models section refuses.
   */
  provider?: Given<string>;
  /** With `provider`, its model id; alone, a configured model by name, else the first model with this id. */
  model?: Given<string>;
  /** Single settings by section and key, e.g. `subagent_runtime.max_running`. */
  settings?: readonly (Given<unknown> & { path: readonly [section: string, key: string] })[];
}

/** The model id `provider: openai` gets when none is given. */
const DEFAULT_OPENAI_MODEL = 'gpt-4o-mini';

export interface AppliedOverrides {
  sections: Mapping;
  /** Where a problem would come from a given value: config path (as problems print it) → its source. */
  sources: Map<string, string>;
}

/** The file's sections (already in this project's spellings) with the overrides written in; a copy. */
export function applyOverrides(sections: Mapping, overrides: ConfigOverrides = {}): AppliedOverrides {
  const out = structuredClone(sections);
  const sources = new Map<string, string>();
  const given = (path: ProblemPath, source: string) => sources.set(formatPath(path), source);

  const chosen = chooseModel(out.models, overrides);
  if (chosen !== undefined) {
    out.models = [chosen.entry];
    if (chosen.made) {
      if (overrides.provider) given(['models', 0, 'provider'], overrides.provider.source);
      if (overrides.model) given(['models', 0, 'model'], overrides.model.source);
    }
    forgetModelReferences(out);
  }
  for (const { path, value, source } of overrides.settings ?? []) {
    const [name, key] = path;
    const section = out[name] ?? {};
    // A section the file wrote as something else is the file's problem to report, not the flag's to hide.
    if (!isMapping(section)) continue;
    out[name] = { ...section, [key]: value };
    given(path, source);
  }
  return { sections: out, sources };
}

/** The one model the overrides ask for (`made`: built from them, not a configured entry), if they ask. */
function chooseModel(
  models: unknown,
  { provider, model }: ConfigOverrides,
): { entry: Mapping; made: boolean } | undefined {
  const listed: Mapping[] =
    Array.isArray(models) && models.length > 0 ? models.filter(isMapping) : [{ ...DEFAULT_MODEL_ENTRY }];
  const id = model?.value;
  if (provider === undefined) {
    if (id === undefined) return undefined;
    const named = listed.find((entry) => entry.name === id);
    return named ? { entry: named, made: false } : { entry: { ...listed[0], model: id }, made: true };
  }
  switch (provider.value) {
    case 'openai': {
      const openaiId = id ?? DEFAULT_OPENAI_MODEL;
      return {
        entry: { name: openaiId, provider: 'openai', model: openaiId, api_key: '$OPENAI_API_KEY' },
        made: true,
      };
    }
    case 'scripted': {
      const current = listed.find((entry) => entry.provider === 'scripted');
      return {
        entry: {
          name: 'scripted',
          provider: 'scripted',
          model: id ?? current?.model ?? 'scripted',
          ...(current?.script_file !== undefined && { script_file: current.script_file }),
        },
        made: true,
      };
    }
    default:
      return {
        entry: { name: provider.value, provider: provider.value, model: id ?? provider.value },
        made: true,
      };
  }
}

/** With one model left, every reference to a model means it: none may point at one that is gone. */
function forgetModelReferences(sections: Mapping): void {
  const drop = (holder: unknown) => {
    if (isMapping(holder)) delete holder.model;
  };
  drop(sections.summarization);
  const subagents = sections.subagents;
  if (!isMapping(subagents)) return;
  drop(subagents);
  for (const group of ['agents', 'custom_agents']) {
    const agents = subagents[group];
    if (isMapping(agents)) for (const name of Object.keys(agents)) drop(ownEntry(agents, name));
  }
}

/** A problem line with the config path of a given value replaced by the name the user gave it by. */
export function attributeProblem(line: string, sources: ReadonlyMap<string, string>): string {
  for (const [path, source] of sources) {
    if (line.startsWith(`${path}: `)) return `${source}${line.slice(path.length)}`;
  }
  return line;
}
