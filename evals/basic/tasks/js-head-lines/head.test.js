const test = require("node:test");
const assert = require("node:assert");
const { firstLines } = require("./head");

test("first lines", () => {
  assert.deepStrictEqual(firstLines("a\nb\nc\n", 2), ["a", "b"]);
  assert.deepStrictEqual(firstLines("a\n", 5), ["a"]);
});
