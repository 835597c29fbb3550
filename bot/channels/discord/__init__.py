"""The Discord channel: the board in a Discord server (the gateway, REST, threads and components).

Modules: :mod:`.config` (the ``discord:`` section), :mod:`.plugin` (the registry's record), :mod:`.channel` (the
channel: the intake's courier, its life), :mod:`.gateway` (discord.py in Sabha's loop), :mod:`.inbound` (where a
message sits), :mod:`.access` (who may talk), :mod:`.store` (the places seen), :mod:`.catchup` (what was sent while
Sabha was down), :mod:`.outbound` (sending), :mod:`.departure` (when a request leaves), :mod:`.stream` (answers shown
while written), :mod:`.format` (Markdown and the 2,000-character split). The factory imports only :mod:`.channel`;
listing the channel imports no client library.
"""
