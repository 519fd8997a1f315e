import unittest
from wordcount import count_words


class WordCountTest(unittest.TestCase):
    def test_wordcount(self):
        self.assertEqual(count_words("The cat saw the dog. THE end"),
                         {"the": 3, "cat": 1, "saw": 1, "dog": 1, "end": 1})


if __name__ == "__main__":
    unittest.main()
