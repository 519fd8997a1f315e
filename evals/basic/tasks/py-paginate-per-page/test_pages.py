import unittest
from pages import page_count, paginate


class PagesTest(unittest.TestCase):
    def test_first_and_last_page(self):
        items = list(range(25))
        self.assertEqual(paginate(items, 1), list(range(10)))
        self.assertEqual(paginate(items, 3), [20, 21, 22, 23, 24])

    def test_page_count(self):
        self.assertEqual(page_count(0), 0)
        self.assertEqual(page_count(25), 3)


if __name__ == "__main__":
    unittest.main()
