const test = require("node:test");
const assert = require("node:assert");
const { retryDelays } = require("./notify");

test("each delay doubles", () => {
  const delays = retryDelays();
  for (let i = 1; i < delays.length; i++) assert.strictEqual(delays[i], delays[i - 1] * 2);
  assert.strictEqual(delays[0], 200);
});
