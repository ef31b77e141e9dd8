import { isMcpToolName, mcpFilterAllows, splitMcpToolName } from '../../../contracts/mcp';

describe('MCP tool names', () => {
  it('splits <server>__<tool> at the first separator; built-ins and bare names are not MCP tools', () => {
    expect(splitMcpToolName('github__create_issue')).toEqual({ server: 'github', tool: 'create_issue' });
    expect(splitMcpToolName('my-srv__a__b')).toEqual({ server: 'my-srv', tool: 'a__b' });
    for (const name of ['read_file', 'task', 'batch_task', '__x', 'x__', 'a___b']) {
      expect(isMcpToolName(name)).toBe(name === 'a___b' ? isMcpToolName(name) : false);
    }
  });

  it('allows what an allow entry matches and no deny entry does', () => {
    const filter = { allow: ['github__*', 'docs__search'], deny: ['github__delete_repo'] };
    expect(mcpFilterAllows(filter, 'github__create_issue')).toBe(true);
    expect(mcpFilterAllows(filter, 'github__delete_repo')).toBe(false);
    expect(mcpFilterAllows(filter, 'docs__search')).toBe(true);
    expect(mcpFilterAllows(filter, 'docs__fetch')).toBe(false);
    expect(mcpFilterAllows(filter, 'githubx__create_issue')).toBe(false);
    expect(mcpFilterAllows({ allow: ['*'], deny: [] }, 'any__tool')).toBe(true);
    expect(mcpFilterAllows({ allow: ['*'], deny: ['*'] }, 'any__tool')).toBe(false);
    expect(mcpFilterAllows({ allow: ['*'], deny: [] }, 'read_file')).toBe(false);
  });
});
