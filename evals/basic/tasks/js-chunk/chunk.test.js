const test = require("node:test");
const assert = require("node:assert");
const { chunk } = require("./chunk");

test("splits", () => {
  assert.deepStrictEqual(chunk([1, 2, 3, 4, 5], 2), [[1, 2], [3, 4], [5]]);
  assert.deepStrictEqual(chunk([1, 2], 5), [[1, 2]]);
  assert.deepStrictEqual(chunk([], 3), []);
});

test("bad size", () => {
  assert.throws(() => chunk([1], 0), RangeError);
});
