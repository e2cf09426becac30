// The boundary checks through the CommonJS entry.
require('./checks.cjs')(require('oxmcp'), 'cjs');
