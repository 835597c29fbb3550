"""The Slack channel: the board in a team's Slack workspace (Events API over HTTP or Socket Mode).

Modules: :mod:`.config` (the ``slack:`` section), :mod:`.plugin` (the registry's record). Only
:mod:`.channel` is imported by the factory, and only it imports ``slack_sdk`` / ``slack_bolt``.
"""
