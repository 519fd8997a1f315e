const test = require("node:test");
const assert = require("node:assert");
const { parseEnv } = require("./env");

test("reads keys and skips comments", () => {
  assert.deepStrictEqual(parseEnv("# c\nA=1\n\nB = two\n"), { A: "1", B: "two" });
});
