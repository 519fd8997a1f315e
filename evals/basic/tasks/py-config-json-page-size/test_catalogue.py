import unittest
from catalogue import first_page


class CatalogueTest(unittest.TestCase):
    def test_sorted_by_title(self):
        books = [{"title": "b"}, {"title": "a"}]
        self.assertEqual(first_page(books), [{"title": "a"}, {"title": "b"}])


if __name__ == "__main__":
    unittest.main()
