// chunk([1, 2, 3, 4, 5], 2) -> [[1, 2], [3, 4], [5]]; a size below 1 throws a RangeError.
function chunk(list, size) {
  throw new Error("not implemented");
}

module.exports = { chunk };
