import unittest
from roman import to_roman


class RomanTest(unittest.TestCase):
    def test_values(self):
        cases = {1: "I", 4: "IV", 9: "IX", 14: "XIV", 40: "XL", 90: "XC",
                 400: "CD", 1994: "MCMXCIV", 2024: "MMXXIV", 3999: "MMMCMXCIX"}
        for number, roman in cases.items():
            self.assertEqual(to_roman(number), roman, number)


if __name__ == "__main__":
    unittest.main()
