const test = require("node:test");
const assert = require("node:assert");
const { table } = require("./table");

test("right-aligns numbers", () => {
  assert.strictEqual(table([["a", 1], ["b", 100]], 4), "a:   1\nb: 100");
});
