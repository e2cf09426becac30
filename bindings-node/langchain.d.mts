// Types for the ES module entry `oxmcp/langchain` (lib/langchain.mjs); the declarations live
// in langchain.d.ts.
export * from './langchain.js';
import * as langchain from './langchain.js';
export default langchain;
