const test = require("node:test");
const assert = require("node:assert");
const { Invoice } = require("./invoice");

test("due thirty days later", () => {
  assert.strictEqual(new Invoice("F-1", "2024-01-10").dueDate(), "2024-02-09");
});

test("describes itself", () => {
  assert.strictEqual(
    new Invoice("F-2", "2024-03-01", 14).describe(),
    "Invoice F-2, dated 2024-03-01, due 2024-03-15",
  );
});
