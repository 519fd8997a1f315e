import unittest
from fizzbuzz import fizzbuzz


class FizzBuzzTest(unittest.TestCase):
    def test_fizzbuzz(self):
        self.assertEqual([fizzbuzz(n) for n in (1, 3, 5, 15, 30, 7)],
                         ["1", "Fizz", "Buzz", "FizzBuzz", "FizzBuzz", "7"])


if __name__ == "__main__":
    unittest.main()
