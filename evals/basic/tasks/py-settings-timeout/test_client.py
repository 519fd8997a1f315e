import unittest
from client import request_options


class ClientTest(unittest.TestCase):
    def test_url(self):
        self.assertEqual(request_options("/eur")["url"], "https://prices.example.com/api/eur")

    def test_timeout_is_a_number(self):
        self.assertIsInstance(request_options("eur")["timeout"], int)


if __name__ == "__main__":
    unittest.main()
