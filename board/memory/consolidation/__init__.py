"""Memory that tidies itself (issue 43): a scheduled, budgeted consolidation of one person's facts.

- :mod:`.settings`: ``memory.consolidation`` as plain values (:class:`ConsolidationSettings`, who is consolidated);
- :mod:`.plan`: what the cheap model is asked (the facts as quoted data) and the JSON plan it answers, checked
  before anything is applied (:func:`plan.checked`);
- :mod:`.changes`: the plan applied in one transaction and recorded as a change (before -> after), listed for the
  owner (``sabha memory changes``) and undone (``sabha memory undo``);
- :mod:`.run`: :class:`run.Consolidator`, which schedules a person's run (a ``scheduled_work`` row, claimed once)
  after new facts were heard, asks the model within the daily cap and applies the plan.

The person's own word always wins: a fact they corrected, one an advisor saved with the remember tool on their
word, or one the owner wrote is never changed by consolidation, and what they asked to forget never comes back
(not even through an undo).
"""

# Submodules, imported on use (this file imports none of them: board.memory.facts reads .settings).
__all__ = ["changes", "plan", "run", "settings"]
