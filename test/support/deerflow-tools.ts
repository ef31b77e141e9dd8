/** DeerFlow's default tools list, for the tests of the `tools:` section and of a run that uses it. */
import { parse } from 'yaml';

/** The `tool_groups:` and `tools:` DeerFlow's config.example.yaml ships switched on (2026-08). */
export const DEERFLOW_DEFAULT_TOOLS = parse(`
tool_groups:
  - name: web
  - name: file:read
  - name: file:write
  - name: bash
  - name: browser
tools:
  - name: web_search
    group: web
    use: deerflow.community.ddg_search.tools:web_search_tool
    max_results: 5
  - name: web_fetch
    group: web
    use: deerflow.community.jina_ai.tools:web_fetch_tool
    timeout: 10
  - name: image_search
    group: web
    use: deerflow.community.image_search.tools:image_search_tool
    max_results: 5
  - name: ls
    group: file:read
    use: deerflow.sandbox.tools:ls_tool
  - name: read_file
    group: file:read
    use: deerflow.sandbox.tools:read_file_tool
  - name: glob
    group: file:read
    use: deerflow.sandbox.tools:glob_tool
    max_results: 200
  - name: grep
    group: file:read
    use: deerflow.sandbox.tools:grep_tool
    max_results: 100
  - name: write_file
    group: file:write
    use: deerflow.sandbox.tools:write_file_tool
  - name: str_replace
    group: file:write
    use: deerflow.sandbox.tools:str_replace_tool
  - name: bash
    group: bash
    use: deerflow.sandbox.tools:bash_tool
`) as Record<string, unknown>;
