import {
  bashArgsSchema,
  BUILTIN_TOOL_SPECS,
  builtinToolSpecs,
  globArgsSchema,
  grepArgsSchema,
  imageSearchArgsSchema,
  isIdempotentCall,
  lsArgsSchema,
  readFileArgsSchema,
  strReplaceArgsSchema,
  webFetchArgsSchema,
  webSearchArgsSchema,
  writeFileArgsSchema,
} from '../../../contracts/tool-specs';
import { TOOL_ACTIVITY_NAMES } from '../../../contracts/tools';

describe('built-in tool specs', () => {
  it('exist for every built-in tool, under its own name', () => {
    expect(Object.keys(BUILTIN_TOOL_SPECS).sort()).toEqual([...TOOL_ACTIVITY_NAMES].sort());
    for (const name of TOOL_ACTIVITY_NAMES) expect(BUILTIN_TOOL_SPECS[name].name).toBe(name);
  });

  it('show the model exactly the argument names the validator accepts', () => {
    const expected = {
      bash: { properties: ['command', 'timeout_seconds'], required: ['command'] },
      ls: { properties: ['path'], required: [] },
      read_file: { properties: ['end_line', 'path', 'start_line'], required: ['path'] },
      write_file: { properties: ['append', 'content', 'path'], required: ['content', 'path'] },
      str_replace: {
        properties: ['new_str', 'old_str', 'path', 'replace_all'],
        required: ['new_str', 'old_str', 'path'],
      },
      // DeerFlow's argument shapes.
      glob: {
        properties: ['description', 'include_dirs', 'max_results', 'path', 'pattern'],
        required: ['pattern'],
      },
      grep: {
        properties: ['case_sensitive', 'description', 'glob', 'literal', 'max_results', 'path', 'pattern'],
        required: ['pattern'],
      },
      web_search: { properties: ['max_results', 'query'], required: ['query'] },
      web_fetch: { properties: ['url'], required: ['url'] },
      image_search: {
        properties: ['layout', 'max_results', 'query', 'size', 'type_image'],
        required: ['query'],
      },
    };
    const validators = {
      bash: bashArgsSchema,
      ls: lsArgsSchema,
      read_file: readFileArgsSchema,
      write_file: writeFileArgsSchema,
      str_replace: strReplaceArgsSchema,
      glob: globArgsSchema,
      grep: grepArgsSchema,
      web_search: webSearchArgsSchema,
      web_fetch: webFetchArgsSchema,
      image_search: imageSearchArgsSchema,
    };
    for (const name of TOOL_ACTIVITY_NAMES) {
      const { parameters } = BUILTIN_TOOL_SPECS[name];
      const args = validators[name];
      expect(parameters.type).toBe('object');
      expect(parameters.additionalProperties).toBe(false);
      expect(parameters).not.toHaveProperty('$schema');
      expect(Object.keys(parameters.properties as object).sort()).toEqual(expected[name].properties);
      expect([...((parameters.required as string[] | undefined) ?? [])].sort()).toEqual(
        expected[name].required,
      );
      expect(Object.keys(args.shape).sort()).toEqual(expected[name].properties);
      expect(args.safeParse({ unexpected: 1 }).success).toBe(false);
    }
  });

  it('declare which tools are safe to retry', () => {
    const idempotent = TOOL_ACTIVITY_NAMES.filter((name) => BUILTIN_TOOL_SPECS[name].idempotent);
    expect(idempotent.sort()).toEqual([
      'glob',
      'grep',
      'image_search',
      'ls',
      'read_file',
      'web_fetch',
      'web_search',
      'write_file',
    ]);
  });

  it('treat an appending write as not idempotent', () => {
    const write = (args: object) => ({ id: 'c', name: 'write_file', args: JSON.stringify(args) });
    expect(isIdempotentCall(write({ path: 'a', content: 'x' }))).toBe(true);
    expect(isIdempotentCall(write({ path: 'a', content: 'x', append: true }))).toBe(false);
    expect(isIdempotentCall({ id: 'c', name: 'bash', args: '{"command":"ls"}' })).toBe(false);
    expect(isIdempotentCall({ id: 'c', name: 'task', args: '{}' })).toBe(false);
  });

  it('give the model specs for built-in names only, in the order asked', () => {
    expect(builtinToolSpecs(['read_file', 'task', 'bash']).map((spec) => spec.name)).toEqual([
      'read_file',
      'bash',
    ]);
    expect(builtinToolSpecs(['ls'])[0]).toEqual({
      name: 'ls',
      description: BUILTIN_TOOL_SPECS.ls.description,
      parameters: BUILTIN_TOOL_SPECS.ls.parameters,
    });
  });
});
