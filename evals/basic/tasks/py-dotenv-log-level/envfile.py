"""Reads KEY=VALUE lines of a .env file (comments and blank lines skipped)."""


def parse_env(text):
    values = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, value = line.split("=", 1)
        values[key.strip()] = value.strip()
    return values


def read_env_file(path):
    with open(path, encoding="utf-8") as f:
        return parse_env(f.read())
