const test = require("node:test");
const assert = require("node:assert");
const { formatPrice, formatTotal } = require("./price");

test("two decimals and the euro sign", () => {
  assert.strictEqual(formatPrice(12.5), "12.50 €");
  assert.strictEqual(formatTotal([{ price: 2, quantity: 3 }]), "6.00 €");
});
