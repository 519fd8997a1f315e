// range(0, 5) -> [0, 1, 2, 3, 4]; range(5, 0, -2) -> [5, 3, 1]; step defaults to 1.
// A step of 0 throws a RangeError.
function range(start, end, step = 1) {
  throw new Error("not implemented");
}

module.exports = { range };
