import unittest
from invoice import invoice_total


class InvoiceTest(unittest.TestCase):
    def test_empty(self):
        self.assertEqual(invoice_total([]), 0)

    def test_total_with_tax(self):
        self.assertEqual(invoice_total([(2, 5.0), (1, 10.0)], 0.2), 24.0)


if __name__ == "__main__":
    unittest.main()
