const test = require("node:test");
const assert = require("node:assert");
const { unique } = require("./unique");

test("drops repeats", () => {
  assert.deepStrictEqual(unique([3, 1, 3, 2, 1]), [3, 1, 2]);
  assert.deepStrictEqual(unique([]), []);
});
