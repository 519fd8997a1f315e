import unittest
from cart import total


class CartTest(unittest.TestCase):
    def test_no_discount(self):
        self.assertEqual(total([(10.0, 2), (5.0, 1)]), 25.0)

    def test_discount(self):
        self.assertEqual(total([(10.0, 2), (5.0, 1)], 10), 22.5)


if __name__ == "__main__":
    unittest.main()
