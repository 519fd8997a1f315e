"""The service's logging settings, from the .env file of the working directory."""
from envfile import read_env_file


def log_settings(path=".env"):
    values = read_env_file(path)
    return {"level": values.get("LOG_LEVEL", "info"), "file": values.get("LOG_FILE")}


if __name__ == "__main__":
    settings = log_settings()
    print(f"level={settings['level']} file={settings['file']}")
