"""The Telegram channel (python-telegram-bot): forum topics per role, DMs, meetings."""
