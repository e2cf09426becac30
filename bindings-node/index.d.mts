// Types for the ES module entry (lib/index.mjs). The declarations live once, in index.d.ts
// (the CommonJS entry's); this file gives `import` its own ESM-typed view of them, with the
// module object as the default export, as lib/index.mjs has it.
export * from './index.js';
import * as oxmcp from './index.js';
export default oxmcp;
