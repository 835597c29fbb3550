"""Sabha's daemon side: config, the command line, and the channels that adapt
Telegram, WhatsApp and the terminal to the channel-agnostic ``board``."""
