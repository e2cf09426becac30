// Types of `oxmcp/langchain` (hand-written; checked by tsc on the tests' usage file).
import type { DynamicStructuredTool } from '@langchain/core/tools';
import type { Host, TranslateOptions } from './index';

/**
 * The tools of every connected server of `host` as LangChain.js tools over the host's
 * sessions (`responseFormat: "content_and_artifact"`: structured content in the artifact,
 * `outputSchema` in `metadata.output_schema`).
 */
export declare function getTools(host: Host, options?: TranslateOptions): Promise<DynamicStructuredTool[]>;
