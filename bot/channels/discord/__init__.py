"""The Discord channel: the board in a Discord server (the gateway, REST, threads and components).

Modules: :mod:`.config` (the ``discord:`` section), :mod:`.plugin` (the registry's record), :mod:`.channel` (the
channel: the intake's courier, its life), :mod:`.gateway` (discord.py in Sabha's loop), :mod:`.inbound` (where a
message sits), :mod:`.access` (who may talk), :mod:`.store` (the places seen), :mod:`.catchup` (what was sent while
Sabha was down), :mod:`.outbound` (sending), :mod:`.departure` (when a request leaves), :mod:`.stream` (answers shown
while written), :mod:`.format` (Markdown and the 2,000-character split). Besides messages, put together by
:mod:`.features`: :mod:`.components` (a reply's buttons), :mod:`.interactions` (a press or a slash command as the
user's message), :mod:`.followups` (an interaction's answer and its token), :mod:`.commands` (the slash commands and
their registration), :mod:`.attachments` (files, fetched from Discord's CDN), :mod:`.meeting` (a meeting in a thread
of its own), :mod:`.verdicts` (a decision's buttons once it is ruled on); :mod:`.invite`, :mod:`.checks` and
:mod:`.cli` (``sabha discord setup``, the checks of ``sabha doctor``). The factory imports only :mod:`.channel`;
listing the channel imports no client library.
"""
