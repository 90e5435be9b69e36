"use strict";
// require("@mongomem/client/ai-sdk"): the package is ES modules. Node 20.19+ and 22.12+ load them with require();
// an older Node gets this error instead of a confusing one.
try {
  module.exports = require("../dist/ai-sdk/index.js");
} catch (error) {
  if (error && (error.code === "ERR_REQUIRE_ESM" || error.code === "ERR_REQUIRE_ASYNC_MODULE")) {
    throw new Error(
      "@mongomem/client/ai-sdk is an ES module and this Node.js cannot require() it: use `import` (or `await import(\"@mongomem/client/ai-sdk\")` from CommonJS), or Node.js 20.19+ / 22.12+",
      { cause: error },
    );
  }
  throw error;
}
