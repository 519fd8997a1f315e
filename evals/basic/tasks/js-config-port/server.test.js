const test = require("node:test");
const assert = require("node:assert");
const { listenAddress } = require("./server");

test("the address is a URL", () => {
  assert.match(listenAddress(), /^http:\/\/127\.0\.0\.1:\d+\/$/);
});
