"""The Slack channel: the board in a team's Slack workspace (Events API over HTTP or Socket Mode).

Modules: :mod:`.config` (the ``slack:`` section), :mod:`.plugin` (the registry's record), :mod:`.channel` (the
channel: the intake's courier, its life), :mod:`.inbound` (a signed request checked and read), :mod:`.socket_mode`
(the same over Slack's socket), :mod:`.access` (who may talk), :mod:`.identity` (a workspace's people),
:mod:`.places` (where a message sits, its thread), :mod:`.store` (drafts and threads' roles), :mod:`.outbound`
(the Web API), :mod:`.stream` (answers shown while written), :mod:`.format` (Markdown as mrkdwn, the split),
:mod:`.blocks` (buttons as Block Kit), :mod:`.interactivity` (a press or ``/board`` as the user's message),
:mod:`.files` (files through the media pipeline), :mod:`.meeting` (a meeting in its thread), :mod:`.verdicts` (a
decision's buttons once it is ruled on); :mod:`.manifest`, :mod:`.doctor` and :mod:`.cli` (``sabha slack setup``,
the checks of ``sabha doctor``). The factory imports only :mod:`.channel`; ``slack_sdk`` is imported by the
modules that talk to Slack (:mod:`.channel`, :mod:`.inbound`, :mod:`.outbound`, :mod:`.files`, :mod:`.socket_mode`,
:mod:`.doctor`), never by this package's listing, :mod:`.config`, :mod:`.plugin` or :mod:`.cli`; ``slack_bolt``
is not used: Slack hears 200 (or its socket ack) only once an event is stored, which bolt's listeners, acknowledged
first, do not fit; the signed requests and the socket are slack_sdk's.
"""
