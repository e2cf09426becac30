// `oxmcp/langchain` (ES module entry): the CommonJS adapter handed the ES module build of
// `@langchain/core`, so the tools and ToolMessages it makes are the caller's classes (the two
// builds of @langchain/core do not share classes).
import cjs from './langchain.cjs';

async function importLangChain() {
  try {
    const [tools, messages] = await Promise.all([import('@langchain/core/tools'), import('@langchain/core/messages')]);
    return { tools, messages };
  } catch (e) {
    throw cjs.missing(e) ? new Error(cjs.MISSING, { cause: e }) : e;
  }
}

export const getTools = (host, options) => cjs.getToolsWith(importLangChain, host, options);
export default { getTools };
