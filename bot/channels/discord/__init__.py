"""The Discord channel: the board in a Discord server (the gateway, REST, threads and components).

Modules: :mod:`.config` (the ``discord:`` section), :mod:`.plugin` (the registry's record). Only
:mod:`.channel` is imported by the factory, and only it imports ``discord.py``.
"""
