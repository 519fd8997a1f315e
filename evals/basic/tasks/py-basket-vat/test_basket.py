import unittest
from basket import Basket


class BasketTest(unittest.TestCase):
    def test_subtotal(self):
        self.assertEqual(Basket().add("pen", 1.5, 4).subtotal(), 6.0)

    def test_total_with_vat(self):
        self.assertEqual(Basket().add("book", 9.99).total_with_vat(), 11.99)
        self.assertEqual(Basket().add("pen", 1.5, 4).total_with_vat(), 7.2)


if __name__ == "__main__":
    unittest.main()
