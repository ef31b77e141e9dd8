/**
 * DeerFlow's `tool_output:` and `read_before_write:` sections with their keys as written (issue 46), resolved
 * into the run scope (contracts/tool-output.ts): absent unless the section is in the file and enabled.
 */
import { z } from 'zod';
import { DEFAULT_TOOL_OUTPUT, isSingleFolderName, type ToolOutputSettings } from '../tool-output';
import { bool, listOf, mappingOf, section, text, wholeNumber } from './fields';

const count = (fallback: number) => wholeNumber(0).default(fallback);

/** `tool_output:`, DeerFlow's `ToolOutputConfig`. */
export const toolOutputSection = section('tool_output', {
  enabled: bool.default(true),
  externalize_min_chars: count(DEFAULT_TOOL_OUTPUT.externalize_min_chars),
  preview_head_chars: count(DEFAULT_TOOL_OUTPUT.preview_head_chars),
  preview_tail_chars: count(DEFAULT_TOOL_OUTPUT.preview_tail_chars),
  fallback_max_chars: count(DEFAULT_TOOL_OUTPUT.fallback_max_chars),
  fallback_head_chars: count(DEFAULT_TOOL_OUTPUT.fallback_head_chars),
  fallback_tail_chars: count(DEFAULT_TOOL_OUTPUT.fallback_tail_chars),
  storage_subdir: text
    .refine(isSingleFolderName, {
      error: 'is not a single folder name (no "/", "\\", "." or ".."; e.g. .tool-results)',
    })
    .default(DEFAULT_TOOL_OUTPUT.storage_subdir),
  exempt_tools: listOf(text, 'tool names').default([...DEFAULT_TOOL_OUTPUT.exempt_tools]),
  tool_overrides: mappingOf(wholeNumber(0), 'thresholds per tool').optional(),
});
export type ToolOutputConfig = z.output<typeof toolOutputSection>;

/** `read_before_write:`, DeerFlow's `ReadBeforeWriteConfig`. */
export const readBeforeWriteSection = section('read_before_write', {
  enabled: bool.default(true),
});
export type ReadBeforeWriteConfig = z.output<typeof readBeforeWriteSection>;

/** The run's `tool_output` settings: absent when the section is absent or off. */
export function resolveToolOutput(config: ToolOutputConfig | undefined): ToolOutputSettings | undefined {
  if (config === undefined || !config.enabled) return undefined;
  const { enabled: _enabled, tool_overrides: overrides, ...settings } = config;
  return {
    ...settings,
    ...(overrides && Object.keys(overrides).length > 0 && { tool_overrides: overrides }),
  };
}

/** Whether the run gates writes on reads: the section is in the file and on. */
export function resolveReadBeforeWrite(config: ReadBeforeWriteConfig | undefined): boolean {
  return config?.enabled === true;
}
