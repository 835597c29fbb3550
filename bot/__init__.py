"""Sabha's daemon side: config, the command line, and the channels that adapt
Telegram, WhatsApp and the terminal to the channel-agnostic ``board``.

- :mod:`bot.app`: wiring, from a loaded config to an open board
- :mod:`bot.daemon`: ``sabha run``, one process, one event loop
- :mod:`bot.scheduled`: the daemon's side of scheduled work (due replies through the running channels)
- :mod:`bot.config`: the config file and its readers
- :mod:`bot.cli`: the ``sabha`` command line
- :mod:`bot.intake`: the one life of an inbound message, shared by every channel
- :mod:`bot.channels`: one package per channel (telegram, whatsapp, web chat)
- :mod:`bot.web`: the owner's web pages at ``/ui/``
- :mod:`bot.ops`: what running Sabha as a service needs (health, metrics, logs, reload ...)
- :mod:`bot.replicas`: several ``sabha run`` on one PostgreSQL state

Nothing is re-exported: every command imports only the modules it uses (``sabha --help`` loads no config).
"""

__all__: list[str] = []
