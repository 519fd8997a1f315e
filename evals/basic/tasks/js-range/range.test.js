const test = require("node:test");
const assert = require("node:assert");
const { range } = require("./range");

test("counts up", () => {
  assert.deepStrictEqual(range(0, 5), [0, 1, 2, 3, 4]);
  assert.deepStrictEqual(range(2, 9, 3), [2, 5, 8]);
});

test("counts down", () => {
  assert.deepStrictEqual(range(5, 0, -2), [5, 3, 1]);
});

test("empty", () => {
  assert.deepStrictEqual(range(3, 3), []);
  assert.deepStrictEqual(range(5, 0), []);
});

test("zero step", () => {
  assert.throws(() => range(0, 1, 0), RangeError);
});
