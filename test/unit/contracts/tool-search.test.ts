import {
  autoPromotions,
  clampAutoPromoteTopK,
  deferredToolsSection,
  notPromotedText,
  parseToolSearchQuery,
  promote,
  searchTools,
  TOOL_SEARCH_MAX_QUERY_CHARS,
  TOOL_SEARCH_MAX_RESULTS,
} from '../../../contracts/tool-search';

const tool = (name: string, description = '') => ({ name, description });

const catalog = [
  tool('github__create_issue', 'Create a new issue in a GitHub repository.'),
  tool('github__list_issues', 'List issues of a repository, filtered by state.'),
  tool('github__create_pull_request', 'Open a pull request.'),
  tool('slack__send_message', 'Send a message to a Slack channel; mentions an issue link when given one.'),
  tool('slack__list_channels', 'List the channels of a workspace.'),
  tool('jira__create_issue', 'Create a Jira issue.'),
  tool('notes__search', 'Search notes.'),
];
const names = (tools: { name: string }[]) => tools.map((t) => t.name);

describe('parseToolSearchQuery', () => {
  it('reads the three forms, trimming space', () => {
    expect(parseToolSearchQuery(' select: a__x , b__y ,, ')).toEqual({
      kind: 'select',
      names: ['a__x', 'b__y'],
    });
    expect(parseToolSearchQuery('+Slack  send message')).toEqual({
      kind: 'required',
      keyword: 'slack',
      rank: 'send message',
    });
    expect(parseToolSearchQuery('+ github')).toEqual({ kind: 'required', keyword: 'github' });
    expect(parseToolSearchQuery('issue|channel')).toEqual({ kind: 'regex', pattern: 'issue|channel' });
  });

  it('has nothing to look for in an empty query or a bare +', () => {
    expect(parseToolSearchQuery('   ')).toBeUndefined();
    expect(parseToolSearchQuery('+')).toBeUndefined();
    expect(parseToolSearchQuery('+   ')).toBeUndefined();
  });
});

describe('searchTools', () => {
  it('select: returns every named tool that exists, however many, in the catalog order', () => {
    const many = Array.from({ length: 12 }, (_, i) => tool(`s__t${i}`));
    const query = `select:${many.map((t) => t.name).join(',')},s__missing`;
    expect(searchTools(many, query)).toHaveLength(12);
    expect(names(searchTools(catalog, 'select:slack__send_message,github__create_issue'))).toEqual([
      'github__create_issue',
      'slack__send_message',
    ]);
    // Exact names only: no prefix, no case folding.
    expect(searchTools(catalog, 'select:github__create, GITHUB__LIST_ISSUES')).toEqual([]);
  });

  it('+keyword requires the keyword in the name (any case) and ranks by the rest', () => {
    expect(names(searchTools(catalog, '+SLACK'))).toEqual(['slack__send_message', 'slack__list_channels']);
    expect(names(searchTools(catalog, '+slack channel'))).toEqual([
      'slack__list_channels',
      'slack__send_message',
    ]);
    // "issue" appears in jira's description but the keyword is required in the name.
    expect(names(searchTools(catalog, '+github issue'))).toEqual([
      'github__create_issue',
      'github__list_issues',
      'github__create_pull_request',
    ]);
    expect(searchTools(catalog, '+nothing')).toEqual([]);
  });

  it('a regex matches names and descriptions, names first, at most five', () => {
    expect(names(searchTools(catalog, 'issue'))).toEqual([
      'github__create_issue',
      'github__list_issues',
      'jira__create_issue',
      'slack__send_message',
    ]);
    expect(names(searchTools(catalog, '^jira__'))).toEqual(['jira__create_issue']);
    expect(searchTools(catalog, 'e')).toHaveLength(TOOL_SEARCH_MAX_RESULTS);
  });

  it('matches a query that is not a valid regex as literal text', () => {
    const odd = [tool('x__calc', 'Computes f(x) for you.'), tool('x__other', 'Nothing.')];
    expect(names(searchTools(odd, 'f(x'))).toEqual(['x__calc']);
    expect(names(searchTools(odd, '+x f(x'))).toEqual(['x__calc', 'x__other']);
  });

  it('runs a regex that backtracks exponentially in linear time', () => {
    // JavaScript's RegExp takes seconds here (minutes a few characters on): a model's query pinned the worker.
    const started = performance.now();
    expect(searchTools([tool('a__b', 'a'.repeat(28))], '(a+)+b')).toEqual([]);
    expect(searchTools([tool('a__b', 'a'.repeat(28))], '+a (a+)+b')).toHaveLength(1);
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('reads a bounded query', () => {
    const long = `select:notes__search${','.repeat(TOOL_SEARCH_MAX_QUERY_CHARS)}github__create_issue`;
    expect(names(searchTools(catalog, long))).toEqual(['notes__search']);
  });

  it('finds nothing for an empty query', () => {
    expect(searchTools(catalog, '')).toEqual([]);
  });
});

describe('deferredToolsSection', () => {
  it('lists the names, sorted, one a line, in the section DeerFlow renders', () => {
    expect(deferredToolsSection(['b__y', 'a__x'])).toBe(
      '<available-deferred-tools>\na__x\nb__y\n</available-deferred-tools>',
    );
  });

  it('is empty when nothing is deferred', () => {
    expect(deferredToolsSection([])).toBe('');
  });
});

describe('promote', () => {
  it('adds what a search found once, after what was promoted before', () => {
    expect(promote(undefined, [])).toEqual([]);
    expect(promote(undefined, ['a__x', 'a__x'])).toEqual(['a__x']);
    expect(promote(['a__x'], ['b__y', 'a__x'])).toEqual(['a__x', 'b__y']);
  });

  it('leaves the promotions it was given as they were (workflow state is replaced, not edited)', () => {
    const before = ['a__x'];
    promote(before, ['b__y']);
    expect(before).toEqual(['a__x']);
  });
});

it('tells the model to search for a tool that was not promoted', () => {
  expect(notPromotedText('github__create_issue')).toBe(
    'Tool "github__create_issue" is a deferred tool whose schema has not been loaded in this run: search for it ' +
      'with tool_search first (e.g. query "select:github__create_issue"), then call it.',
  );
});

describe('auto-promotion (tool_search.auto_promote_top_k)', () => {
  const routed = [
    { name: 'pg__query', priority: 100, keywords: ['orders table', 'SQL'] },
    { name: 'pg__describe', priority: 50, keywords: ['sql', 'schema'] },
    { name: 'web__search', priority: 10, keywords: ['news'] },
    { name: 'pg__admin', priority: 50, keywords: ['sql'] },
  ];

  it('promotes the tools whose keywords the user message holds, highest priority first, then by name', () => {
    expect(autoPromotions(routed, 'Run some sql over the Orders Table', 3)).toEqual([
      'pg__query',
      'pg__admin',
      'pg__describe',
    ]);
  });

  it('promotes at most top_k (clamped to 1..5, as DeerFlow does)', () => {
    expect(autoPromotions(routed, 'sql', 2)).toEqual(['pg__query', 'pg__admin']);
    expect(autoPromotions(routed, 'sql', 0)).toEqual(['pg__query']);
    expect(clampAutoPromoteTopK(9)).toBe(5);
  });

  it('matches substrings, case-insensitively; nothing for no match or no user text', () => {
    expect(autoPromotions(routed, 'breaking NEWSROOM', 3)).toEqual(['web__search']);
    expect(autoPromotions(routed, 'hello', 3)).toEqual([]);
    expect(autoPromotions(routed, undefined, 3)).toEqual([]);
    expect(autoPromotions([{ name: 'a__b', priority: 0, keywords: ['  '] }], 'anything', 3)).toEqual([]);
  });
});
