"""The catalogue's configuration, read from config.json beside this file."""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def load():
    with open(os.path.join(HERE, "config.json"), encoding="utf-8") as f:
        return json.load(f)
