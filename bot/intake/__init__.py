"""The intake: the one life of an inbound message, shared by every channel.

- :mod:`bot.intake.answers`: what the intake uses of the board (the front door, the store, the clock, the schedule)
- :mod:`bot.intake.courier`: the intake's port: what every channel must do (:class:`~bot.intake.courier.Courier`),
  the optional capabilities it declares, and the :class:`~bot.intake.courier.Capabilities` resolved from them
- :mod:`bot.intake.delivery`: how one delivery went (``SendProgress``, ``SendFailed``, ``DeliveryOutcome``)
- :mod:`bot.intake.intake`: :class:`~bot.intake.intake.Intake` (one channel's) and the shared ``IntakeHub``
- :mod:`bot.intake.inbox`: the durable inbox (stored before acknowledged, answered exactly once)
- :mod:`bot.intake.lanes`: lanes under a global cap; :mod:`bot.intake.leasing`: one replica per conversation
- :mod:`bot.intake.storage`: whether the state can be written; :mod:`bot.intake.config`: config ``inbox``

Channels import this package's port; it imports nothing from :mod:`bot.channels`. This module imports none
of its submodules (a channel importing the port pays for nothing else).
"""

# Submodules, imported on use.
__all__ = ["answers", "config", "courier", "delivery", "inbox", "intake", "lanes", "leasing", "migrations", "storage"]
